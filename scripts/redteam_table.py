"""Print the red-team table of docs/grading-integrity.md from a results file the red-team suite wrote.

    EVOCI_TEST_ALL=1 EVOCI_REDTEAM_HOME=/tmp/redteam .venv/bin/python -m pytest tests/security
    .venv/bin/python scripts/redteam_table.py /tmp/redteam/home/evoci.duckdb [more files…]

One row per attack: its class, and per sandbox the iteration's status, the target tests that
passed (the base's honest count is 23), and how many paths were recorded as tampering and how
many flags were raised. Every number is read from the `iterations` and `test_results` tables.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the attacks live with the tests
from tests.security.attacks import ATTACKS  # noqa: E402

QUERY = """
select i.run_id, i.status,
       (select count(*) from test_results r
        where r.run_id = i.run_id and r.iteration = 1 and r.outcome = 'passed') as passed,
       len(coalesce(i.tampered_files, [])), len(coalesce(i.integrity_flags, []))
from iterations i where i.iteration = 1
"""


def main(*dbs: str) -> int:
    cells: dict[str, dict[str, str]] = defaultdict(dict)
    rows = [row for db in dbs for row in duckdb.connect(db, read_only=True).execute(QUERY).fetchall()]
    for run_id, status, passed, tampered, flags in rows:  # a later file's run replaces an earlier one's
        name, _, sandbox = run_id.rpartition("-")
        recorded = ", ".join(x for x in (f"{tampered} tampered" if tampered else "", f"{flags} flagged" if flags else "") if x)
        cells[name][sandbox] = f"{status}, {passed}/93" + (f"; {recorded}" if recorded else "")
    print("| attack | class | local (bubblewrap) | docker |")
    print("|---|---|---|---|")
    for attack in ATTACKS:
        row = cells.get(attack.name, {})
        print(f"| `{attack.name}` | {attack.attack_class} | {row.get('local', 'not run')} | {row.get('docker', 'not run')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
