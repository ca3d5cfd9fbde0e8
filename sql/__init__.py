"""evoci's SQL: the base-table schema and one metric view (or table macro) per file.

``apply(con)`` creates the base tables and (re)creates every view in ``views/``.
View files may depend on each other; they are applied until every one succeeds, so a
file never needs to know its place in an order.
"""

from __future__ import annotations

if __name__ != "evoci.sql":  # the folder is on sys.path (e.g. a test run from the repository root)
    raise ImportError(f"import evoci.sql, not {__name__}: this folder is installed as evoci.sql, and a second "
                      "copy of its modules would hold a second copy of every flow, task and setting")

from pathlib import Path

import duckdb

_HERE = Path(__file__).parent


def schema_sql() -> str:
    """The DDL of the base tables."""
    return (_HERE / "schema.sql").read_text()


def view_files() -> list[Path]:
    """Every metric view file, sorted by name."""
    return sorted((_HERE / "views").glob("*.sql"))


def _upgrade_agent_calls(con: duckdb.DuckDBPyConnection) -> None:
    """Give an old file's ``agent_calls`` the ``node_run`` key column (a key cannot be altered in place)."""
    columns = [r[0] for r in con.execute(
        "select column_name from information_schema.columns where table_name = 'agent_calls'").fetchall()]
    if not columns or "node_run" in columns:
        return
    con.execute("alter table agent_calls rename to agent_calls_before_node_run")
    con.execute(schema_sql())
    kept = ", ".join(columns)
    con.execute(f"insert into agent_calls ({kept}) select {kept} from agent_calls_before_node_run")
    con.execute("drop table agent_calls_before_node_run")


def apply(con: duckdb.DuckDBPyConnection) -> None:
    """Create the base tables if missing, upgrade old ones, and (re)create every view and macro."""
    _upgrade_agent_calls(con)
    con.execute(schema_sql())
    pending = view_files()
    while pending:
        failed: list[tuple[Path, Exception]] = []
        for path in pending:
            try:
                con.execute(path.read_text())
            except (duckdb.CatalogException, duckdb.BinderException) as exc:
                # Depends on a view not created yet, or on an older version of one that an
                # upgrade has not replaced yet: try again after the others.
                failed.append((path, exc))
        if len(failed) == len(pending):
            names = ", ".join(f"{p.name}: {e}" for p, e in failed)
            raise RuntimeError(f"could not create these views (fix their SQL): {names}")
        pending = [p for p, _ in failed]


__all__ = ["apply", "schema_sql", "view_files"]
