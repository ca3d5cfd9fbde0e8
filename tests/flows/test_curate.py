"""`evoci curate` on the built-in demo repository and on a small evoci-authored one (spans checked by hand)."""

from __future__ import annotations

import json

import git
import pytest

from evoci.cli import main
from evoci.demo_repo import build_demo_repo
from evoci.swe_ci.demo import HISTORY_DIR
from tests.flows.helpers import query
from tests.repos import make_repo

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

CALC0 = "def add(a, b):\n    return a + b\n"
CALC1 = CALC0 + "\n\ndef sub(a, b):\n    return a - b\n"
CALC2 = CALC1 + "\n\ndef mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n"
CALC4 = CALC2 + "\n\ndef neg(a):\n    return -a\n"
CASES = (("add", "2, 3", 5), ("sub", "5, 3", 2), ("mul", "2, 3", 6), ("div", "6, 3", 2), ("neg", "4", -4))


def _suite_up_to(last: str) -> str:
    """The test file with one test per function, up to and including ``last``'s."""
    names = [name for name, _, _ in CASES]
    cases = CASES[:names.index(last) + 1]
    return "import calc\n" + "".join(f"\n\ndef test_{n}():\n    assert calc.{n}({a}) == {v}\n" for n, a, v in cases)


def make_calc(path):
    """Spans by hand: requirements.txt appears at commit 3, so [0..2] and [3..5].
    Pair 0→2 changes 12 non-test lines (three 4-line functions) and adds 3 passing tests (gap 3);
    pair 3→5 changes 5 lines (neg, README) and adds 1 test (gap 1)."""
    return make_repo(path, [
        {"calc.py": CALC0, "tests/test_calc.py": _suite_up_to("add")},
        {"calc.py": CALC1, "tests/test_calc.py": _suite_up_to("sub")},
        {"calc.py": CALC2, "tests/test_calc.py": _suite_up_to("div")},
        {"requirements.txt": "# no third-party dependencies\n"},
        {"calc.py": CALC4, "tests/test_calc.py": _suite_up_to("neg")},
        {"README.md": "# calc\n"},
    ], tags={})


def test_curate_keeps_and_rejects_the_hand_checked_pairs(tmp_path):
    calc = make_calc(tmp_path / "calc")
    demo = build_demo_repo(tmp_path / "semverkit", HISTORY_DIR)
    home, out = tmp_path / "home", tmp_path / "curated.jsonl"
    argv = ["curate", str(demo.path), str(calc), "--min-changed-lines", "60", "--min-gap", "2",
            "--home", str(home), "--output", str(out)]
    assert main(argv) == 0
    c = [commit.hexsha for commit in reversed(list(git.Repo(calc).iter_commits()))]
    d = demo.commits
    rows = query(home / "evoci.duckdb", "select repo, span_first, span_last, changed_lines, n_oracle, n_base, gap, "
                                        "status, split_part(reason, ':', 1) from curation_pairs order by repo, span_first")
    # The demo's pyproject.toml changes at commits 3 and 8: spans [0..2], [3..7], [8..9].
    assert [r[1:3] for r in rows if r[0] == str(demo.path)] == [(0, 2), (3, 7), (8, 9)]
    by_span = {(r[0], r[1]): r for r in rows}
    assert by_span[(str(demo.path), 8)][3:] == (53, None, None, None, "rejected", "too_small")  # 53 < 60 lines
    for first in (0, 3):
        kept = by_span[(str(demo.path), first)]
        assert kept[7] == "kept" and kept[6] == kept[4] - kept[5] >= 2
    # calc: 12 lines < 60, so with the paper's size rule only demo pairs are tested …
    assert by_span[(str(calc), 0)][3:] == (12, None, None, None, "rejected", "too_small")
    assert by_span[(str(calc), 3)][3:] == (5, None, None, None, "rejected", "too_small")
    dataset = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(t["base_ref"], t["oracle_ref"]) for t in dataset] == [(d[0], d[2]), (d[3], d[7])]

    # … and with no size minimum, calc's pairs run: 0→2 gains 3 tests (kept), 3→5 only 1 (rejected).
    home2, out2 = tmp_path / "home2", tmp_path / "calc.jsonl"
    assert main(["curate", str(calc), "--min-changed-lines", "1", "--min-gap", "2", "--home", str(home2),
                 "--output", str(out2)]) == 0
    assert query(home2 / "evoci.duckdb", "select span_first, span_last, changed_lines, changed_files, n_oracle, n_base, "
                                         "gap, status, split_part(reason, ':', 1) from curation_pairs order by span_first") == [
        (0, 2, 12, 1, 4, 1, 3, "kept", None),
        (3, 5, 5, 2, 5, 4, 1, "rejected", "small_gap"),
    ]
    [task] = [json.loads(line) for line in out2.read_text().splitlines()]
    assert (task["base_ref"], task["oracle_ref"], task["metadata"]["gap"]) == (c[0], c[2], 3)

    # The same command again resumes: nothing is written twice, the dataset is the same.
    assert main(["curate", str(calc), "--min-changed-lines", "1", "--min-gap", "2", "--home", str(home2),
                 "--output", str(out2)]) == 0
    assert query(home2 / "evoci.duckdb", "select count(*) from curation_pairs") == [(2,)]
    assert [json.loads(line) for line in out2.read_text().splitlines()] == [task]


def test_a_second_curate_on_a_run_another_process_writes_is_refused(tmp_path, capsys):
    """Two curate commands on one curation run: the second is refused (exit 75) before it writes a row."""
    import subprocess
    import sys

    from evoci.errors import EXIT_BUSY

    calc = make_calc(tmp_path / "calc")
    home = tmp_path / "home"
    db = home / "evoci.duckdb"
    home.mkdir()
    # Another live process holds the run, as a running curate does.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\nfrom evoci.store import lease\n"
         "lease.acquire(Path(sys.argv[1]), 'curate-calc')\nprint('held', flush=True)\ntime.sleep(600)", str(db)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        code = main(["curate", str(calc), "--min-changed-lines", "1", "--run-id", "curate-calc", "--home", str(home)])
        err = capsys.readouterr().err
        assert code == EXIT_BUSY, err
        assert "is being written by another evoci process" in err
        assert query(db, "select count(*) from curation_pairs") == [(0,)]
    finally:
        holder.kill()
        holder.wait()
    # Once it is gone, the same command runs (its lease is taken over at once: its process is dead).
    assert main(["curate", str(calc), "--min-changed-lines", "1", "--run-id", "curate-calc", "--home", str(home)]) == 0
    assert query(db, "select count(*) from curation_pairs") == [(2,)]
