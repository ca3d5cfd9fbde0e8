"""A run's lease: one live process writes it; a dead or frozen owner's lease is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timezone

import duckdb
import pytest

from evoci.errors import LeaseLost, RunBusy
from evoci.store import Facts, lease

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from evoci.store import Facts, lease
    db = Path(sys.argv[1])
    with lease.scope():
        lease.acquire(db, "r1")
        print("held", flush=True)
        sys.stdin.readline()  # go on when told
        try:
            Facts(db).run_finished("r1")
        except Exception as exc:
            print(type(exc).__name__, exc, flush=True)
        else:
            print("wrote", flush=True)
""")


def holder(db, **env) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ, **env})
    assert proc.stdout.readline().strip() == "held"
    return proc


def leases(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("select run_id, task_id, pid from leases").fetchall()
    finally:
        con.close()


def test_a_live_owner_refuses_a_second_process_at_once_and_says_who_and_since_when(tmp_path):
    db = tmp_path / "evoci.duckdb"
    other = holder(db, EVOCI_LEASE_TTL_S="600")
    try:
        t0 = time.monotonic()
        with lease.scope(), pytest.raises(RunBusy) as refused:
            lease.acquire(db, "r1")
        assert time.monotonic() - t0 < 120  # refused, not made to wait for the lease to expire
        assert f"pid {other.pid}" in str(refused.value) and "since" in str(refused.value)
        other.stdin.write("\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "wrote"  # the owner writes on
    finally:
        other.kill()
        other.wait()


def test_a_killed_owner_is_taken_over_at_once_and_a_finished_one_leaves_no_lease(tmp_path):
    db = tmp_path / "evoci.duckdb"
    other = holder(db)
    other.send_signal(signal.SIGKILL)
    other.wait()
    assert [pid for _, _, pid in leases(db)] == [other.pid]  # kill -9 left its lease behind
    with lease.scope():
        lease.acquire(db, "r1")  # its owner is gone from this host: no wait for expiry
        Facts(db).run_finished("r1")
    assert leases(db) == []  # released when the scope ended


def test_a_frozen_owner_loses_its_lease_after_expiry_and_then_writes_nothing(tmp_path):
    db = tmp_path / "evoci.duckdb"
    other = holder(db, EVOCI_LEASE_TTL_S="60")
    try:
        other.send_signal(signal.SIGSTOP)  # alive, but no heartbeat
        with lease.scope():
            with pytest.raises(RunBusy):
                lease.acquire(db, "r1")
            con = duckdb.connect(str(db), read_only=True)
            [(expires,)] = con.execute("select expires_at from leases").fetchall()
            con.close()
            time.sleep(max((expires - datetime.now(timezone.utc).replace(tzinfo=None)).total_seconds(), 0) + 1)
            lease.acquire(db, "r1")  # expired: taken over
            other.send_signal(signal.SIGCONT)
            other.stdin.write("\n")
            other.stdin.flush()
            answer = other.stdout.readline()
            assert answer.startswith(LeaseLost.__name__), answer
        other.wait(timeout=30)
    finally:
        other.kill()
        other.wait()


BUSY_AT_EXIT = textwrap.dedent("""
    import sys, threading, time
    from contextlib import contextmanager
    from pathlib import Path
    import duckdb
    import evoci.store.db as db
    from evoci.store import Facts, lease

    path = Path(sys.argv[1])
    Facts(path)
    renewing = threading.Event()
    real = db.transaction

    @contextmanager
    def slow_renewal(p, **kw):  # a renewal that takes a while, as one waiting on a busy store does
        if threading.current_thread().name == "evoci-lease":
            renewing.set()
            end = time.monotonic() + 2
            while time.monotonic() < end:
                con = duckdb.connect()  # in memory: the exiting process's own release is not held up
                con.execute("select 1").fetchall()
                con.close()
        with real(p, **kw) as con:
            yield con

    class Teardown:  # a process with much to tear down at exit (Prefect's is)
        def __del__(self):
            time.sleep(1)

    db.transaction = slow_renewal
    teardown = Teardown()
    with lease.scope():
        lease.acquire(path, "r1")
        renewing.wait(30)
    print("done", flush=True)
""")


def test_a_process_whose_lease_is_being_renewed_as_its_flows_end_exits_cleanly(tmp_path):
    # A heartbeat still inside DuckDB when the interpreter finalized aborted the process
    # (SIGABRT, "FATAL: exception not rethrown") after it had printed its results.
    done = subprocess.run([sys.executable, "-c", BUSY_AT_EXIT, str(tmp_path / "evoci.duckdb")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "EVOCI_LEASE_TTL_S": "0.6"})
    assert (done.returncode, done.stdout.strip()) == (0, "done"), done.stderr[-2000:]
    assert leases(tmp_path / "evoci.duckdb") == []
