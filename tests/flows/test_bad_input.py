"""Bad input gets a clear error, is recorded as data, and the rest of the run goes on."""

from __future__ import annotations

import pytest

from evoci.domain import RunConfig
from evoci.flows.benchmark import benchmark
from tests.flows.helpers import query
from tests.repos import calc_repo, make_repo, write_dataset

pytestmark = pytest.mark.usefixtures("prefect_server")

ADD = "def add(a, b):\n    return a + b\n"
TEST_ADD = "import calc\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n"
TEST_SPIN = "import calc\n\ndef test_spin():\n    assert calc.spin() == 1\n"


def test_one_dataset_with_every_kind_of_bad_input(tmp_path):
    calc_repo(tmp_path / "calc")
    # The oracle only edits the README: n(c*) = n(c0), no gap.
    make_repo(tmp_path / "nogap", [{"src/calc/__init__.py": ADD, "tests/test_calc.py": TEST_ADD},
                                   {"README.md": "docs\n"}], {"base": 0, "oracle": 1})
    # No test passes on the oracle.
    make_repo(tmp_path / "nopass", [{"src/calc/__init__.py": ADD, "tests/test_calc.py": TEST_ADD},
                                    {"tests/test_calc.py": "def test_x():\n    assert False\n"}], {"base": 0, "oracle": 1})
    # Iteration 1 hangs (killed at the test timeout, scored from what passed), iteration 2 fixes it.
    make_repo(tmp_path / "hang", [
        {"src/calc/__init__.py": ADD, "tests/test_calc.py": TEST_ADD},
        {"src/calc/__init__.py": ADD + "\ndef spin():\n    while True:\n        pass\n"},
        {"src/calc/__init__.py": ADD + "\ndef spin():\n    return 1\n", "tests/test_spin.py": TEST_SPIN},
    ], {"base": 0, "oracle": 2})
    (tmp_path / "plain").mkdir()
    dataset = write_dataset(tmp_path / "tasks.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"},
        "{not json",
        {"task_id": "no-oracle", "repo": "calc", "base_ref": "base"},
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"},
        {"task_id": "bad-ref", "repo": "calc", "base_ref": "v9.9", "oracle_ref": "oracle"},
        {"task_id": "not-git", "repo": "plain", "base_ref": "base", "oracle_ref": "oracle"},
        {"task_id": "no-repo", "repo": "missing", "base_ref": "base", "oracle_ref": "oracle"},
        {"task_id": "nogap", "repo": "nogap", "base_ref": "base", "oracle_ref": "oracle"},
        {"task_id": "nopass", "repo": "nopass", "base_ref": "base", "oracle_ref": "oracle"},
        {"task_id": "hang", "repo": "hang", "base_ref": "base", "oracle_ref": "oracle", "test_timeout_s": 4},
    ])
    home = tmp_path / "home"
    summaries = benchmark(str(dataset), RunConfig(max_iterations=4), home=str(home))
    db = home / "evoci.duckdb"

    assert {s.task_id: s.status for s in summaries} == {
        "calc": "done", "bad-ref": "input_error", "not-git": "input_error", "no-repo": "input_error",
        "nogap": "invalid", "nopass": "invalid", "hang": "done"}
    dataset_errors = [m for (m,) in query(db, "select message from failures where node = 'dataset' order by message")]
    assert dataset_errors == [
        f"{dataset}:2: not JSON (Expecting property name enclosed in double quotes) — each line must be one JSON object",
        f"{dataset}:3: missing field(s) oracle_ref — every task needs task_id, repo, base_ref, oracle_ref",
        f"{dataset}:4: duplicate task_id 'calc' — task ids must be unique",
    ]
    reasons = dict(query(db, "select task_id, reason from tasks where status <> 'done'"))
    assert "base ref 'v9.9' does not exist" in reasons["bad-ref"]
    assert "is not a git repository" in reasons["not-git"]
    assert "does not exist" in reasons["no-repo"]
    assert reasons["nogap"].startswith("no gap")
    assert reasons["nopass"].startswith("no test passes on the oracle")
    # Invalid tasks are flagged, never scored (no division by zero).
    scores = dict(query(db, "select task_id, evoscore from evoscore(gamma := 1.0)"))
    assert scores["nogap"] is None and scores["nopass"] is None and scores["calc"] is not None
    # The hanging suite was killed at the timeout: recorded, and scored from what passed (nothing: a = −1).
    assert query(db, "select iteration, status, a from swe_ci_iterations where task_id = 'hang' order by iteration") == [
        (0, "ok", 0.0), (1, "timeout", -1.0), (2, "ok", 1.0)]
    assert query(db, "select distinct outcome from test_results where task_id = 'hang' and iteration = 1") == [("missing",)]
