"""The results store on a PostgreSQL server, for runs that many processes or hosts write at once.

Writers execute evoci's own statements (written for DuckDB: ``?`` parameters, ``on conflict do
nothing``, ``unnest(?::varchar[])``) on PostgreSQL, in one transaction per batch, with the same
keys, so a fact written twice is still a no-op and claims are still read-compare-write in one
transaction. There is no file lock, so there is no spool: a server that does not answer is an
infrastructure failure (``StorageError``), which Prefect retries.

DuckDB stays the query engine: a reader gets an in-memory DuckDB holding a copy of the server's
tables (all of them, or one run's rows) with every view of ``sql/views/`` created on top, so the
view files are the interface on either store. The copy goes through evoci's Python process
(the postgres extension that would let DuckDB read the server directly exists offline only for
an older DuckDB than evoci's; see docs/beyond-one-machine.md).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import duckdb

import evoci.sql
from evoci.errors import StorageError
from evoci.settings import STORE_SCHEMES
_SCHEMA_LOCK = 0x65766F6369  # "evoci": one schema migration at a time across every host
_ready: set[str] = set()  # servers whose schema this process has applied
_ready_lock = threading.Lock()


def is_postgres(location: object) -> bool:
    """Whether a results location names a PostgreSQL server rather than a DuckDB file."""
    return isinstance(location, str) and location.startswith(STORE_SCHEMES)


def redacted(url: str) -> str:
    """``url`` without its password, for messages and the run's record."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def pg_sql(statement: str) -> str:
    """One of evoci's statements in PostgreSQL's dialect: ``?`` → ``%s``, literal ``%`` doubled.

    Only the statement text changes; quoted literals keep their ``?`` (none of evoci's use one,
    but a user's SQL might).
    """
    out, quote = [], None
    for ch in statement:
        if quote:
            out.append("%%" if ch == "%" else ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


def schema_sql() -> str:
    """evoci's base-table DDL for PostgreSQL: DuckDB's ``double`` is ``double precision`` there."""
    return re.sub(r"\bdouble\b(?! precision)", "double precision", evoci.sql.schema_sql())


class PgConnection:
    """A PostgreSQL connection with the slice of DuckDB's interface evoci's writers use."""

    def __init__(self, con: Any):
        self._con = con
        self._cur = con.cursor()

    def execute(self, sql: str, params: Any = None) -> "PgConnection":
        if params is None:
            self._cur.execute(sql)  # no parameters: psycopg sends the text as it is
        else:
            self._cur.execute(pg_sql(sql), [json.dumps(v) if isinstance(v, dict) else v for v in params])
        return self

    def executemany(self, sql: str, rows: list[list[Any]]) -> None:
        self._cur.executemany(pg_sql(sql), [[json.dumps(v) if isinstance(v, dict) else v for v in row] for row in rows])

    def fetchone(self) -> tuple | None:
        return self._cur.fetchone()

    def fetchall(self) -> list[tuple]:
        return self._cur.fetchall()


def _connect(url: str):
    import psycopg

    from psycopg.types.string import TextLoader

    try:
        con = psycopg.connect(url, connect_timeout=30)
    except psycopg.OperationalError as exc:
        raise StorageError(f"cannot reach the results store {redacted(url)}: {exc} — start the server "
                           "(`bash scripts/postgres.sh up`) or check the URL given with --store") from exc
    # JSON columns come back as text, as DuckDB returns them: evoci's readers parse them themselves.
    for name in ("json", "jsonb"):
        con.adapters.register_loader(name, TextLoader)
    return con


def _apply_schema(con: Any, url: str) -> None:
    """Create or upgrade the tables once per schema version, never while the schema is current.

    ``alter table … if not exists`` takes an exclusive lock on its table even when it changes
    nothing: run by every new process, it deadlocked with other processes' writes (a worker's
    flow run starting while another worker wrote). So the schema's digest is kept in
    ``evoci_schema`` and the DDL runs only when it is not there, one process at a time.
    """
    import psycopg

    with _ready_lock:
        if url in _ready:
            return
        digest = hashlib.sha256(schema_sql().encode()).hexdigest()
        try:
            if not _schema_current(con, digest):
                with con.transaction():
                    # Two hosts creating the same table at once collide inside PostgreSQL's catalog.
                    con.execute("select pg_advisory_xact_lock(%s)", [_SCHEMA_LOCK])
                    if not _schema_current(con, digest, within=True):  # another process applied it meanwhile
                        con.execute(schema_sql())
                        con.execute("create table if not exists evoci_schema (digest varchar primary key, "
                                    "applied_at timestamp not null default now())")
                        con.execute("insert into evoci_schema (digest) values (%s) on conflict do nothing", [digest])
        except psycopg.OperationalError as exc:  # a deadlock or a lost server: transient, the node is retried
            raise StorageError(f"the results store {redacted(url)} could not create or check its tables: {exc} — "
                               "retry when the server answers") from exc
        _ready.add(url)


def _schema_current(con: Any, digest: str, *, within: bool = False) -> bool:
    """Whether the server holds this schema version (in its own short transaction unless ``within`` one)."""
    def look() -> bool:
        if con.execute("select to_regclass('evoci_schema')").fetchone()[0] is None:
            return False
        return con.execute("select 1 from evoci_schema where digest = %s", [digest]).fetchone() is not None

    if within:
        return look()
    with con.transaction():
        return look()


@contextmanager
def transaction(url: str, *, claim: str | None = None) -> Iterator[PgConnection]:
    """A write transaction on the server at ``url``: committed on success, rolled back on error.

    ``claim``: an advisory lock on that name for the transaction's length (see ``evoci.store.db``).
    """
    import psycopg

    con = _connect(url)
    try:
        _apply_schema(con, url)
        try:
            with con.transaction():
                if claim is not None:
                    con.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"evoci:{claim}"])
                yield PgConnection(con)
        except psycopg.OperationalError as exc:
            raise StorageError(f"the results store {redacted(url)} failed mid-write: {exc} — the batch was "
                               "rolled back; retry when the server answers") from exc
    finally:
        con.close()


# -- reading: a DuckDB copy with the views ------------------------------------------------------

_DUCK_TYPES = {
    "character varying": "varchar", "text": "varchar", "integer": "integer", "bigint": "bigint",
    "smallint": "smallint", "double precision": "double", "real": "float", "boolean": "boolean",
    "timestamp without time zone": "timestamp", "json": "json", "jsonb": "json",
}
_ARRAY_TYPES = {"_varchar": "varchar[]", "_text": "varchar[]", "_float8": "double[]", "_float4": "float[]"}


def _duck_type(table: str, data_type: str, udt: str) -> str:
    if data_type == "ARRAY":
        embedding = re.fullmatch(r"cl_embeddings_(\d+)", table)
        if embedding:  # a fixed-size vector in DuckDB (array_cosine_similarity needs the size)
            return f"float[{embedding.group(1)}]"
        return _ARRAY_TYPES.get(udt, "varchar[]")
    return _DUCK_TYPES.get(data_type, "varchar")


def snapshot(url: str, *, run_id: str | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the server's tables (only ``run_id``'s rows if given) and every view."""
    con = _connect(url)
    try:
        _apply_schema(con, url)
        duck = duckdb.connect(":memory:")
        evoci.sql.apply(duck)
        columns: dict[str, list[tuple[str, str, str]]] = {}
        for table, column, data_type, udt in con.execute(
                """select table_name, column_name, data_type, udt_name from information_schema.columns
                   where table_schema = current_schema() and table_name <> 'evoci_schema'
                   order by table_name, ordinal_position""").fetchall():
            columns.setdefault(table, []).append((column, data_type, udt))
        known = {r[0] for r in duck.execute("select table_name from duckdb_tables()").fetchall()}
        for table, cols in columns.items():
            if table not in known:
                duck.execute(f"create table {table} ({', '.join(f'{c} {_duck_type(table, t, u)}' for c, t, u in cols)})")
            _copy_table(con, duck, table, cols, run_id)
        return duck
    finally:
        con.close()


def _copy_table(con: Any, duck: duckdb.DuckDBPyConnection, table: str, cols: list[tuple[str, str, str]],
                run_id: str | None) -> None:
    names = [c for c, _, _ in cols]
    where = " where run_id = %s" if run_id is not None and "run_id" in names else ""
    select = ", ".join(f"{c}::text" if t in ("json", "jsonb") else c for c, t, _ in cols)
    with con.cursor(name=f"evoci_copy_{table}") as cur:  # server-side: a large table is streamed
        cur.execute(f"select {select} from {table}{where}", [run_id] if where else None)
        while rows := cur.fetchmany(20000):
            values = list(zip(*rows))
            placeholders = ", ".join(f"unnest(${i + 1})" for i in range(len(names)))
            duck.execute(f"insert into {table} ({', '.join(names)}) select {placeholders}", [list(v) for v in values])


__all__ = ["PgConnection", "is_postgres", "pg_sql", "redacted", "schema_sql", "snapshot", "transaction"]
