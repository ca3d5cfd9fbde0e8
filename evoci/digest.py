"""What every protocol's report shares: cells as people read them, pasteable ``evoci sql`` hints, the run to show.

Each protocol reads its own numbers from its views (SWE-CI: ``evoci.swe_ci.digest``); these
helpers only format them and name the run.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from evoci.errors import StorageError
from evoci.settings import Paths, location
from evoci.store.db import describe, reading


def sql_hint(db: Path | None, query: str) -> str:
    """An ``evoci sql`` command that can be pasted as printed: this program's path, and --db unless it is the default."""
    program = Path(sys.argv[0]) if sys.argv and Path(sys.argv[0]).name == "evoci" else Path("evoci")
    # Double quotes read best around SQL's single quotes; shlex quoting when they would not be safe.
    quoted = f'"{query}"' if not set(query) & set('"$`\\!') else shlex.quote(query)
    command = f"{shlex.quote(str(program))} sql {quoted}"
    if db is not None and location(db) != Paths.default().db:
        shown = describe(location(db))
        command += f" --db {shlex.quote(shown)}"
    return command


def latest_run_id(db: Path) -> str:
    with reading(location(db)) as con:
        row = con.execute("select run_id from runs order by created_at desc limit 1").fetchone()
    if not row:
        raise StorageError(f"no runs in {db} — run `evoci demo` first")
    return row[0]


def last_finished_run_id(db: Path, protocol: str) -> str | None:
    """The run of ``protocol`` that finished last: the one a command just ran, when its flow
    returned nothing to name it by (every record was skipped, or the flow raised)."""
    with reading(location(db)) as con:
        row = con.execute("select run_id from runs where protocol = ? and finished_at is not null "
                          "order by finished_at desc limit 1", [protocol]).fetchone()
    return row[0] if row else None


def fmt(value: object, digits: int = 3) -> str:
    """One cell as people read it: 3 decimals, yes/no, — for NULL."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def money(value: float | None) -> str:
    """Dollars; None is a cost evoci cannot know (a model without a price), never shown as free."""
    return "unknown (a model without a price)" if value is None else f"${value:.4f}"
