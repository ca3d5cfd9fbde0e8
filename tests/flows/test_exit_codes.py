"""Every task ends in a recorded state, and `evoci run` exits non-zero naming each task it refused or left
unscored — kept results are never shown as this command's without saying so."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.flows.helpers import query
from tests.repos import calc_repo, write_dataset

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

LINE = {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}


def evoci(tmp_path, prefect_server, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PREFECT_API_URL": prefect_server}
    result = subprocess.run([sys.executable, "-m", "evoci.cli", *args, "--home", str(tmp_path / "home")], env=env,
                            capture_output=True, text=True, timeout=900)
    return result.returncode, result.stdout + result.stderr


def test_an_unknown_agent_is_refused_before_anything_runs_with_exit_2(tmp_path, prefect_server):
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [LINE])
    code, out = evoci(tmp_path, prefect_server, "run", str(dataset), "--agent", "no-such-agent", "--max-iterations", "1")
    assert code == 2, out  # a usage error: the command line names the agents it knows
    assert "unknown swe-ci agent 'no-such-agent'" in out and "choose one of" in out, out
    db = tmp_path / "home" / "evoci.duckdb"
    assert not db.exists() or query(db, "select count(*) from tasks") == [(0,)]  # no task left 'running'


def test_a_refused_task_says_its_scores_are_kept_results_and_exits_1(tmp_path, prefect_server):
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [LINE])
    code, out = evoci(tmp_path, prefect_server, "run", str(dataset), "--run-id", "r", "--max-iterations", "1")
    assert code == 0, out
    write_dataset(dataset, [{**LINE, "base_ref": "oracle~2"}])  # the line changed under the same run id
    code, out = evoci(tmp_path, prefect_server, "run", str(dataset), "--run-id", "r", "--max-iterations", "1")
    assert code == 1, out
    assert "refused: task calc — task calc changed since run r recorded it" in out, out
    assert "kept results: the scores below for calc were recorded by an earlier command" in out, out
    assert out.index("kept results") < out.index("tasks scored")  # said before the table, not after
    assert "exit 1: 1 task(s) refused" in out, out
    assert json.loads(query(tmp_path / "home" / "evoci.duckdb", "select spec from tasks")[0][0])["base_ref"] == "base"
