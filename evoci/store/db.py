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
# Set by the reading commands (`evoci sql`, `evoci report`, ``locked_reads``): read-only
# connections then read the results file and nothing else (``lock_down``).
_locked_reads: dict[str, tuple[str, ...]] = {}


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
    always carries the views of the evoci version that last wrote it. The connection holds the
    process's write lock while open: DuckDB refuses a read-only and a read-write connection to
    one file in one process at once, and a background writer (the lease heartbeat) may write any time.
    """
    if postgres.is_postgres(path):
        con = postgres.snapshot(path)  # reads only: writes go through transaction()
        try:
            if read_only and "dirs" in _locked_reads:
                lock_down(con, _locked_reads["dirs"])
            yield con
        finally:
            con.close()
        return
    with _write_lock:
        with _connect(path, read_only=read_only, wait_s=wait_s) as con:
            yield con


@contextmanager
def _connect(path: Path, *, read_only: bool, wait_s: float | None) -> Iterator[duckdb.DuckDBPyConnection]:
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
                raise StorageError(f"cannot open results database {path}: {exc} — {_what_to_do(exc, path)}") from exc
            if time.monotonic() > deadline:
                raise DatabaseLocked(
                    f"results database {path} stayed locked by another process for {wait_s:g} s "
                    "— close other DuckDB sessions on it (e.g. a duckdb shell) and retry"
                ) from exc
            time.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 1.0)
    try:
        if read_only and "dirs" in _locked_reads:
            lock_down(con, _locked_reads["dirs"])
        if not read_only and path not in _ready:
            with _write_lock:
                evoci.sql.apply(con)
                _ready.add(path)
        yield con
    finally:
        con.close()


@contextmanager
def locked_reads(allowed_dirs: tuple[str, ...] = ()) -> Iterator[None]:
    """Inside this block, read-only connections see the results file and nothing else.

    For the commands that run people's queries (``evoci sql``, ``evoci report``). ``allowed_dirs``
    are folders whose files a query may read (``evoci sql --allow-files DIR``).
    """
    _locked_reads["dirs"] = tuple(str(Path(d).absolute()) + "/" for d in allowed_dirs)
    try:
        yield
    finally:
        _locked_reads.pop("dirs", None)


def lock_down(con: duckdb.DuckDBPyConnection, allowed_dirs: tuple[str, ...] = ()) -> None:
    """Switch off DuckDB's access to every other file and database, then lock the configuration.

    The results file is open already (read-only), so it stays readable; attach, copy, export,
    file readers and extension install/load now fail, and no SET can undo it. The views read
    only tables of the file, so every view still works.
    """
    if allowed_dirs:
        con.execute("set allowed_directories = ?", [list(allowed_dirs)])
    con.execute("set autoload_known_extensions = false")
    con.execute("set autoinstall_known_extensions = false")
    con.execute("set enable_external_access = false")
    con.execute("set lock_configuration = true")


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
        try:
            con.execute("begin transaction")
            try:
                yield con
            except BaseException:
                con.execute("rollback")
                raise
            con.execute("commit")
        except (duckdb.IOException, duckdb.FatalException, duckdb.TransactionException, OSError) as exc:
            # A full disk or a file made read-only mid-run: the results so far stay as committed. DuckDB
            # reports a write-ahead log it cannot write at commit as a TransactionException ("Failed to
            # commit: Could not write file …"); any other TransactionException is not the disk's.
            if isinstance(exc, duckdb.TransactionException) and "failed to commit" not in str(exc).lower():
                raise
            raise StorageError(f"results database {Path(path).absolute()} could not be written: {exc} — "
                               f"{_what_to_do(exc, path)}") from exc


def _what_to_do(exc: BaseException, path: Path) -> str:
    """What a person can do about a results file that cannot be opened or written."""
    text = str(exc).lower()
    if "no space" in text or "disk is full" in text or "could not write" in text and "space" in text:
        return (f"free space on the disk that holds {Path(path).parent}, then run the same command again to resume "
                "(every result recorded so far is kept)")
    if "read-only" in text or "permission" in text or "readonly" in text:
        return (f"make {path} and its folder writable (or pass --db a writable file), then run the same command "
                "again to resume (every result recorded so far is kept)")
    return "check the file and its disk, then run the same command again to resume"
