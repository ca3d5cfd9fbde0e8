"""Short-lived connections to the results store: a DuckDB file (the default) or a PostgreSQL server.

DuckDB lets one process hold a database file read-write and locks every other process
out, even readers. evoci therefore opens the file for each write batch and closes it at
once, and waits (with jittered backoff) while another process holds it. Threads of one
process share DuckDB's in-process instance, so they never contend for the file lock;
a process-wide lock serialises their write transactions.

A location that is a ``postgresql://`` URL goes to ``evoci.store.postgres`` instead: writes are
transactions on the server, reads get an in-memory DuckDB copy with the same views.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

import evoci.sql
from evoci.errors import DatabaseLocked, StorageError
from evoci.settings import db_wait_s
from evoci.store import postgres

Location = Path | str
"""Where results live: a DuckDB file's path, or a PostgreSQL URL (``postgresql://…``)."""

# Opening DuckDB costs tens of milliseconds, paid on every write batch; not probing for
# extensions (evoci needs only the built-in json) and one thread make it cheaper for writers.
_WRITER_CONFIG = {"threads": 1, "autoload_known_extensions": False, "autoinstall_known_extensions": False}
_write_lock = threading.RLock()
_ready: set[Path] = set()  # files whose schema and views this process has applied


def describe(where: Location) -> str:
    """A location as messages show it (never a password)."""
    return postgres.redacted(where) if postgres.is_postgres(where) else str(where)


def _is_lock_error(exc: duckdb.Error) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


@contextmanager
def connect(path: Location, *, read_only: bool = False, wait_s: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open ``path``, waiting up to ``wait_s`` while another process holds it; close on exit.

    Writers apply the schema and (re)create the views once per process, so the file
    always carries the views of the evoci version that last wrote it.
    """
    if postgres.is_postgres(path):
        con = postgres.snapshot(path)  # reads only: writes go through transaction()
        try:
            yield con
        finally:
            con.close()
        return
    path = Path(path).absolute()
    wait_s = db_wait_s() if wait_s is None else wait_s
    if read_only and not path.exists():
        raise StorageError(f"no results database at {path} — run `evoci demo` or `evoci run` first, or pass --db")
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    delay = 0.02
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config={} if read_only else _WRITER_CONFIG)
            break
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                raise StorageError(f"cannot open results database {path}: {exc}") from exc
            if time.monotonic() > deadline:
                raise DatabaseLocked(
                    f"results database {path} stayed locked by another process for {wait_s:g} s "
                    "— close other DuckDB sessions on it (e.g. a duckdb shell) and retry"
                ) from exc
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 1.0)
    try:
        if not read_only and path not in _ready:
            with _write_lock:
                evoci.sql.apply(con)
                _ready.add(path)
        yield con
    finally:
        con.close()


@contextmanager
def reading(path: Location, *, wait_s: float | None = None, run_id: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection that is safe beside this process's own writer threads.

    DuckDB refuses a read-only and a read-write connection to one file from one process
    at the same time ("different configuration"), so this holds the process's write lock
    while it is open: writers in other threads wait for it, briefly. On a PostgreSQL store
    it is a DuckDB copy; ``run_id`` limits the copy to that run's rows (what a run's own
    nodes read), so a node's read does not grow with every other run in the store.
    """
    if postgres.is_postgres(path):
        con = postgres.snapshot(path, run_id=run_id)
        try:
            yield con
        finally:
            con.close()
        return
    with _write_lock, connect(path, read_only=True, wait_s=wait_s) as con:
        yield con


@contextmanager
def transaction(path: Location, *, wait_s: float | None = None,
                claim: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """A write transaction on ``path``: committed on success, rolled back on error.

    ``claim`` names what a read-compare-write transaction claims (a run, a task): no two
    transactions with the same claim run at once. A DuckDB file has one writer at a time
    anyway; on PostgreSQL, where a row that does not exist yet cannot be locked, it is an
    advisory lock held until the transaction ends.
    """
    if postgres.is_postgres(path):
        with postgres.transaction(path, claim=claim) as con:  # no file lock: concurrent writers are the server's job
            yield con
        return
    with _write_lock, connect(path, wait_s=wait_s) as con:
        con.execute("begin transaction")
        try:
            yield con
        except BaseException:
            con.execute("rollback")
            raise
        con.execute("commit")
