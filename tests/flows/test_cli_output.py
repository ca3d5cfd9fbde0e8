"""What `evoci run` prints without -v: evoci's own lines only — no Prefect log lines, no tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.repos import calc_repo, write_dataset

pytestmark = pytest.mark.usefixtures("prefect_server")


def test_a_failing_run_prints_evoci_lines_and_no_traceback_unless_asked(tmp_path, prefect_server):
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}, "{not json"])
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "EVOCI_INJECT_FAULTS": "test@1x9"}
    for name in ("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "EVOCI_HOME", "EVOCI_DB"):
        env.pop(name, None)
    result = subprocess.run([sys.executable, "-m", "evoci.cli", "run", str(dataset), "--max-iterations", "1",
                             "--home", str(tmp_path / "home")], env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output and "| ERROR" not in output and "| INFO" not in output
    assert "calc: failed — injected fault test@1" in output
    assert "skipped: " in output and "tasks.jsonl:2: not JSON" in output
    assert "partial run: 2 of the dataset's 2 task(s) have no score (dataset_error 1, infra_error 1)" in output
