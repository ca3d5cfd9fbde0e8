"""One writer per run: a lease in the results store names the one live process that may write it.

Two processes evolving the same run (a schedule firing while a manual run is alive, a command
started twice) would share workspaces and mix their facts. So a run (``task_id = ''``) and each
task are claimed in the ``leases`` table by one process: its host, pid, start time and a random
token. Taking, renewing and releasing a lease are one ordinary transaction each (a read, then an
upsert that only replaces the owner that was read), so the same SQL holds on PostgreSQL.

A lease lasts ``EVOCI_LEASE_TTL_S`` (60 s) past its last renewal; a heartbeat thread renews
every sixth of that. A lease is taken over when it expired, or at once when its owner ran on
this host and that process is gone (``kill -9``), so resuming never waits. A process that could
not renew in time stops writing (``LeaseLost``) before anyone else may take its lease, and every
write transaction checks that its leases are still its own.
"""

from __future__ import annotations

import atexit
import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator

from evoci.errors import LeaseLost, RunBusy
from evoci.settings import lease_ttl_s, location


STOP_WAIT_S = 60.0  # longest a process about to exit waits for a renewal in flight


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def process_started(pid: int) -> datetime | None:
    """When process ``pid`` of this host started (from /proc), or None where that cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                    if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return datetime.fromtimestamp(boot + ticks / os.sysconf("SC_CLK_TCK"), timezone.utc).replace(tzinfo=None)


@dataclass(frozen=True)
class Owner:
    """A process that holds (or held) leases."""

    token: str
    host: str
    pid: int
    started: datetime | None

    def alive(self) -> bool | None:
        """Whether this process still runs: None when it ran on another host (only expiry can tell)."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        now = process_started(self.pid)
        return self.started is None or now is None or abs((now - self.started).total_seconds()) < 0.5


_me: Owner | None = None


def me() -> Owner:
    """This process as an owner (a forked child is another owner)."""
    global _me
    if _me is None or _me.pid != os.getpid():
        _me = Owner(uuid.uuid4().hex, socket.gethostname(), os.getpid(), process_started(os.getpid()))
    return _me


def _busy(run_id: str, task_id: str, row: tuple) -> RunBusy:
    _, host, pid, _, taken_at, renewed_at, expires_at = row
    what = f"run {run_id}" + (f", task {task_id}," if task_id else "")
    return RunBusy(
        f"{what} is being written by another evoci process: pid {pid} on host {host}, since "
        f"{taken_at:%Y-%m-%d %H:%M:%S} UTC (last renewed {max((_now() - renewed_at).total_seconds(), 0):.0f} s ago) "
        f"— nothing was written; wait for it to end (or stop it), then run the same command to resume; if that "
        f"process is gone its lease is taken over after {expires_at:%H:%M:%S} UTC")


def take(con: Any, db: Path, run_id: str, task_id: str = "", *, ttl_s: float | None = None) -> None:
    """Claim (run_id, task_id) of results file ``db`` for this process inside the caller's transaction
    (on ``con``), or raise ``RunBusy``."""
    ttl_s = lease_ttl_s() if ttl_s is None else ttl_s
    owner, now = me(), _now()
    row = con.execute("""select owner, host, pid, process_started, taken_at, renewed_at, expires_at from leases
                         where run_id = ? and task_id = ?""", [run_id, task_id]).fetchone()
    if row and row[0] != owner.token and row[6] > now and Owner(row[0], row[1], row[2], row[3]).alive() is not False:
        raise _busy(run_id, task_id, row)
    # Replaces only the owner just read: a process that took it meanwhile wins (PostgreSQL too).
    con.execute("""insert into leases (run_id, task_id, owner, host, pid, process_started, taken_at, renewed_at, expires_at)
                   values (?, ?, ?, ?, ?, ?, ?, ?, ?)
                   on conflict (run_id, task_id) do update set owner = excluded.owner, host = excluded.host,
                       pid = excluded.pid, process_started = excluded.process_started,
                       taken_at = case when leases.owner = excluded.owner then leases.taken_at else excluded.taken_at end,
                       renewed_at = excluded.renewed_at, expires_at = excluded.expires_at
                   where leases.owner = ?""",
                [run_id, task_id, owner.token, owner.host, owner.pid, owner.started, now, now,
                 now + timedelta(seconds=ttl_s), row[0] if row else None])
    won = con.execute("""select owner, host, pid, process_started, taken_at, renewed_at, expires_at from leases
                         where run_id = ? and task_id = ?""", [run_id, task_id]).fetchone()
    if won[0] != owner.token:
        raise _busy(run_id, task_id, won)
    _held.add(location(db), run_id, task_id, ttl_s)


class _Registry:
    """The leases this process holds, per results file, and the heartbeat that renews them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: dict[Path, set[tuple[str, str]]] = {}
        self.valid_until: dict[Path, float] = {}  # monotonic time after which this process must not write
        self.lost: dict[Path, str] = {}
        self.ttl_s = lease_ttl_s()
        self.depth = 0
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def add(self, db: Path, run_id: str, task_id: str, ttl_s: float) -> None:
        with self.lock:
            self.held.setdefault(location(db), set()).add((run_id, task_id))
            self.ttl_s = ttl_s
            self.valid_until[location(db)] = time.monotonic() + ttl_s * 5 / 6
            self.lost.pop(location(db), None)
            if self.thread is None or not self.thread.is_alive():
                self.stop.clear()
                self.thread = threading.Thread(target=self._beat, name="evoci-lease", daemon=True)
                self.thread.start()

    def check(self, db: Path, con: Any | None = None) -> None:
        """Raise ``LeaseLost`` if this process may no longer write ``db``.

        Inside a write transaction (``con``) the store decides: the leases must still name this
        process. Outside (a batch about to be spooled while another process holds the file) the
        clock decides: past the last renewal's margin another process may take the run over.
        """
        db = location(db)
        with self.lock:
            held = set(self.held.get(db, ()))
            lost = self.lost.get(db)
            late = held and time.monotonic() > self.valid_until.get(db, 0)
        if lost:
            raise LeaseLost(lost)
        if late and con is None:  # only the spool path trusts the clock; a transaction asks the store below
            raise LeaseLost(f"this process could not renew its lease on {db} in time, so another may have taken "
                            "the run over; it stops writing — run the same command again to resume")
        if held and con is not None:
            mine = set(con.execute("select run_id, task_id from leases where owner = ?", [me().token]).fetchall())
            if held - mine:
                self._lose(db, held - mine)
                raise LeaseLost(self.lost[db])

    def _lose(self, db: Path, gone: set[tuple[str, str]]) -> None:
        with self.lock:
            runs = ", ".join(sorted(f"{r}/{t}" if t else r for r, t in gone))
            self.lost[db] = (f"another process took over {runs} in {db} after this one failed to renew its lease; "
                             "this process stops writing — check that only one evoci process runs it")

    def _beat(self) -> None:
        from evoci.store.db import transaction

        while not self.stop.wait(self.ttl_s / 6):
            with self.lock:
                dbs = {db: set(keys) for db, keys in self.held.items() if keys}
            for db, keys in dbs.items():
                if self.stop.is_set():
                    break
                now = _now()
                try:
                    with transaction(db, wait_s=self.ttl_s / 6) as con:
                        kept = set(con.execute("""update leases set renewed_at = ?, expires_at = ? where owner = ?
                                                  returning run_id, task_id""",
                                               [now, now + timedelta(seconds=self.ttl_s), me().token]).fetchall())
                except Exception:  # noqa: BLE001 — locked, full or gone: try again at the next beat
                    continue
                if keys - kept:
                    self._lose(db, keys - kept)
                else:
                    with self.lock:
                        self.valid_until[db] = time.monotonic() + self.ttl_s * 5 / 6

    def release_all(self) -> None:
        """Release every lease of this process (its flows ended); a store it cannot reach lets them expire."""
        from evoci.store.db import transaction

        with self.lock:
            dbs = [db for db, keys in self.held.items() if keys]
            self.held.clear()
            self.valid_until.clear()
        self.stop_beating()
        for db in dbs:
            try:
                with transaction(db, wait_s=5) as con:
                    con.execute("delete from leases where owner = ?", [me().token])
            except Exception:  # noqa: BLE001 — the lease expires by itself, or the next claim sees this process gone
                pass


    def stop_beating(self) -> None:
        """Stop the heartbeat and wait for a renewal it is making.

        The heartbeat is a daemon thread; one still inside DuckDB when the interpreter finalizes
        is ended by ``pthread_exit`` in the middle of C++ code, which aborts the whole process
        (SIGABRT, "FATAL: exception not rethrown") after its results were already printed.
        """
        with self.lock:
            self.stop.set()
            beat, self.thread = self.thread, None
        if beat is not None and beat is not threading.current_thread():
            beat.join(timeout=self.ttl_s / 6 + STOP_WAIT_S)


_held = _Registry()
atexit.register(_held.stop_beating)  # flows that never left their scope (an error, sys.exit) still stop it


def check(db: Path, con: Any | None = None) -> None:
    """Raise ``LeaseLost`` if this process lost a lease it holds on ``db``."""
    _held.check(location(db), con)


def holds(db: Path) -> bool:
    with _held.lock:
        return bool(_held.held.get(location(db)))


@contextmanager
def scope() -> Iterator[None]:
    """Leases taken inside are released when the outermost scope of this process ends."""
    with _held.lock:
        _held.depth += 1
    try:
        yield
    finally:
        with _held.lock:
            _held.depth -= 1
            last = _held.depth == 0
        if last:
            _held.release_all()


def acquire(db: Path, run_id: str, task_id: str = "") -> None:
    """Take a lease in its own transaction (``RunBusy`` if a live process holds it)."""
    from evoci.store.db import transaction

    with transaction(location(db)) as con:
        take(con, location(db), run_id, task_id)


__all__ = ["Owner", "acquire", "check", "holds", "me", "process_started", "scope", "take"]
