"""What every protocol's Prefect artifacts share: artifact keys and markdown tables.

Each protocol publishes its own run's artifacts from its report module (SWE-CI:
``evoci.swe_ci.report``; SWE-EVO, NITR, SWE-Bench-CL: theirs). Creating artifacts never fails
a run: a problem is logged as a warning and the run goes on.
"""

from __future__ import annotations

import re


def artifact_key(*parts: str) -> str:
    """A Prefect artifact key (lowercase letters, digits and dashes) from names."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", "-".join(("evoci", *parts)).lower())).strip("-")


def _cell(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
