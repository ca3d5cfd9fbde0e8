"""Which protocol reads a dataset: named with ``--protocol``, or recognised from whole records.

Guessing from the first bytes of a file routed a SWE-Bench-CL curriculum (whose tasks carry
``instance_id`` and ``FAIL_TO_PASS``) to SWE-EVO, and a folder whose first record was larger
than the bytes read to SWE-CI. Here every record is parsed whole and classified by the fields
it has; a dataset whose records belong to two protocols, or to none, is an error that asks
for ``--protocol`` instead of a guess.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evoci.errors import DatasetError
from evoci.untrusted import json_loads

PROTOCOLS = ("swe-ci", "swe-evo", "nitr", "swe-bench-cl")
BUILTIN = {"demo": "swe-ci", "swe-evo-demo": "swe-evo", "swe-bench-cl-demo": "swe-bench-cl", "nitr": "nitr"}
SWE_EVO_FIELDS = ("instance_id", "FAIL_TO_PASS", "PASS_TO_PASS")
SWE_CI_FIELDS = ("task_id", "repo")


def record_protocol(record: Any) -> str | None:
    """The protocol a parsed record belongs to, from its fields; None when it has none's."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("sequences"), list):
        return "swe-bench-cl"
    if all(k in record for k in SWE_EVO_FIELDS):
        return "swe-evo"
    if all(k in record for k in SWE_CI_FIELDS):
        return "swe-ci"
    return None


def _records(path: Path) -> Iterator[Any]:
    """Every record of a JSON file (an object or a list of them) or of a JSONL file, parsed whole."""
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        value = json_loads(text)
    except json.JSONDecodeError:
        for line in text.splitlines():
            try:
                yield json_loads(line)
            except json.JSONDecodeError:
                continue  # the protocol's loader lists the line as a bad one
        return
    yield from (value if isinstance(value, list) else [value])


def detect_protocol(source: str, named: str | None = None) -> str:
    """``named`` (``--protocol``) if given; else the built-in names, ``nitr:…``, a SWE-CI release
    split, or the one protocol every recognised record of ``source`` belongs to."""
    if named:
        return named
    if source in BUILTIN or source.startswith("nitr:"):
        return BUILTIN.get(source, "nitr")
    path = Path(source)
    if path.is_file() and path.suffix == ".csv":
        return "swe-ci"  # a release split (metadata/<split>.csv)
    if path.is_dir() and (path / "metadata").is_dir():
        return "swe-ci"  # a SWE-CI release folder (with --split)
    files = sorted(path.glob("*.json")) if path.is_dir() else [path] if path.is_file() else []
    if path.is_dir() and not files:
        raise DatasetError("the folder holds no .json record — pass a folder of SWE-EVO records, or a file", path=source)
    if not files:
        raise DatasetError("dataset not found — pass `demo`, `swe-evo-demo`, `swe-bench-cl-demo`, `nitr`, `nitr:<checkout>`, "
                           "a JSONL or JSON file, or a folder of .json records", path=source)
    votes = Counter(p for f in files for p in map(record_protocol, _records(f)) if p)
    if len(votes) == 1:
        return next(iter(votes))
    if not votes:
        if path.is_file() and path.suffix == ".jsonl":
            return "swe-ci"  # evoci's own task format: its loader names what is wrong with each line
        raise DatasetError("no record of a known protocol (SWE-CI tasks have task_id and repo; SWE-EVO records "
                           "instance_id, FAIL_TO_PASS and PASS_TO_PASS; a SWE-Bench-CL curriculum a sequences list) "
                           f"— pass --protocol {{{','.join(PROTOCOLS)}}}", path=source)
    counts = ", ".join(f"{n} {p}" for p, n in sorted(votes.items()))
    raise DatasetError(f"records of more than one protocol ({counts}) — split the dataset, or pass --protocol",
                       path=source)
