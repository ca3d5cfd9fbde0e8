"""SIGINT and SIGTERM stop a run within seconds, recorded and resumable, with Prefect's temporary server;
a server left behind by ``kill -9`` is stopped by the next command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.flows.helpers import query
from tests.flows.test_resume import recorded_iterations
from tests.repos import calc_repo, write_dataset

pytestmark = pytest.mark.slow

FINAL = """select (select count(*) from iterations), (select count(*) from test_results),
                  (select count(*) from agent_calls), (select count(*) from runs), (select count(*) from tasks),
                  (select string_agg(status, ',') from tasks), (select count(*) from leases)"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not open(f"/proc/{pid}/stat").read().split(")")[1].split()[0] == "Z"


def start(tmp_path):
    """``evoci run`` of a task whose test runs take ≥ 5 s, with its own temporary Prefect server.

    The test sees iteration 1 by reading the results file, which it cannot open while the run
    writes it; on a loaded machine 1 s test runs let the task reach its solving iteration 3
    (``done``) before the signal came, and so did 5 s ones once on CI. Iteration 2's test run
    (the regressing code) takes 30 s more, so ≥ 40 s of work remain after iteration 1."""
    if not (tmp_path / "calc").exists():
        calc_repo(tmp_path / "calc", slow_s=5.0, regression_s=30.0)
        write_dataset(tmp_path / "signals.jsonl", [
            {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["PREFECT_HOME"] = str(tmp_path / "prefect")
    env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "900"  # a busy machine starts it slowly
    command = [sys.executable, "-m", "evoci.cli", "run", str(tmp_path / "signals.jsonl"), "--home",
               str(tmp_path / "home"), "--max-iterations", "5"]
    return command, env, subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def servers(tmp_path) -> list[int]:
    folder = tmp_path / "prefect" / "evoci-servers"
    return [json.loads(p.read_text())["server_pid"] for p in folder.glob("*.json")] if folder.is_dir() else []


def wait_for_iteration_1(db, proc) -> set[int]:
    """The iterations recorded when iteration 1 was first seen."""
    deadline = time.monotonic() + 900  # a busy machine starts Prefect's server slowly
    try:
        while 1 not in (seen := recorded_iterations(db)):
            assert proc.poll() is None, proc.communicate()[0]
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.1)
        return seen
    except BaseException:
        proc.kill()  # never left running by a failed test
        proc.wait()
        raise


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_run_in_seconds_recorded_interrupted_and_the_same_command_resumes(tmp_path, signum):
    db = tmp_path / "home" / "evoci.duckdb"
    command, env, proc = start(tmp_path)
    seen = wait_for_iteration_1(db, proc)
    [server] = servers(tmp_path)
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:  # where it waits: every thread's stack (evoci.interrupt), then the rest
        proc.send_signal(signal.SIGUSR1)
        out, _ = proc.communicate(timeout=120)
    took = time.monotonic() - sent
    assert proc.returncode == 128 + signum, out
    assert took < 20, f"stopping took {took:.1f} s; the command's output:\n{out[-20000:]}"
    assert "run the same command again to resume" in out and signal.Signals(signum).name in out
    assert not alive(server), "the temporary Prefect server outlived the command"
    assert 5 not in recorded_iterations(db)  # it stopped; it did not run on to the end
    assert query(db, "select status from tasks") == [("interrupted",)], f"iterations recorded at the signal: {seen}"
    assert query(db, "select node, kind from failures") == [("flow", "interrupted")]
    assert query(db, "select count(*) from leases") == [(0,)]

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stdout + again.stderr
    # Iterations 0..3 (solved at 3), 5 target tests each, 2 replay calls per iteration ≥ 1: each row once.
    assert query(db, FINAL) == [(4, 20, 6, 1, 1, "done", 0)]


def test_a_server_left_by_kill_9_is_stopped_by_the_next_command(tmp_path):
    db = tmp_path / "home" / "evoci.duckdb"
    command, env, proc = start(tmp_path)
    wait_for_iteration_1(db, proc)
    [orphan] = servers(tmp_path)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)  # the orphan server does not hold the command's output open
    time.sleep(2)
    assert alive(orphan)  # kill -9 gives the command no chance to stop it

    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"stopped the temporary Prefect server (pid {orphan})" in again.stdout
    assert not alive(orphan)
    assert query(db, FINAL) == [(4, 20, 6, 1, 1, "done", 0)]
