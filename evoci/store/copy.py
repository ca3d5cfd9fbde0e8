"""Carry results from one store to another: a DuckDB file into PostgreSQL, or back into a file.

Every row is inserted with ``on conflict do nothing`` on the table's key, so copying twice, or
into a store that already holds some of the same runs, writes each fact once. Tables that a
protocol creates on demand (SWE-Bench-CL's ``cl_embeddings_<dim>``) are created in the target
with their key before their rows are copied.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evoci.settings import location
from evoci.store.db import Location, describe, reading, transaction
from evoci.store.postgres import is_postgres

BATCH_ROWS = 5000


@dataclass(frozen=True)
class Copied:
    table: str
    rows: int  # rows read from the source (the target may already have held some)


def copy_store(source: str, target: str) -> list[Copied]:
    """Copy every table of ``source`` into ``target``; the target's schema is created if missing."""
    src, dst = location(source), location(target)
    if src == dst:
        raise ValueError(f"source and target are the same store ({describe(src)}) — name another target")
    copied = []
    with reading(src) as con:
        tables = [r[0] for r in con.execute(
            "select table_name from duckdb_tables() where schema_name = 'main' order by table_name").fetchall()]
        for table in tables:
            columns = con.execute(f"select * from {table} limit 0").description
            names = [c[0] for c in columns]
            cursor = con.execute(f"select {', '.join(names)} from {table}")
            total = 0
            with transaction(dst) as out:
                _create_on_demand_table(out, dst, table)
                while rows := cursor.fetchmany(BATCH_ROWS):
                    _insert(out, is_postgres(dst), table, names, rows)
                    total += len(rows)
            copied.append(Copied(table, total))
    return copied


def _create_on_demand_table(out, dst: Location, table: str) -> None:
    embedding = re.fullmatch(r"cl_embeddings_(\d+)", table)
    if embedding:
        from evoci.swe_bench_cl.memory import embeddings_table_sql

        out.execute(embeddings_table_sql(table, int(embedding.group(1)), postgres=is_postgres(dst)))


def _insert(out, to_postgres: bool, table: str, names: list[str], rows: list[tuple]) -> None:
    columns = ", ".join(names)
    if to_postgres:  # one round trip per batch (psycopg pipelines executemany)
        marks = ", ".join("?" for _ in names)
        out.executemany(f"insert into {table} ({columns}) values ({marks}) on conflict do nothing",
                        [[list(v) if isinstance(v, tuple) else v for v in row] for row in rows])
        return
    # DuckDB: one statement per batch, column-wise (a statement per row costs milliseconds).
    unnests = ", ".join(f"unnest(${i + 1})" for i in range(len(names)))
    out.execute(f"insert into {table} ({columns}) select {unnests} on conflict do nothing",
                [list(column) for column in zip(*rows)])


__all__ = ["Copied", "copy_store"]
