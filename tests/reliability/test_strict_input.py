"""Strict input, checked before anything runs: through the real `evoci run`.

Agents, their options and the sandbox are refused before a run is recorded (no results file
appears); a dataset line that is not exactly a task is a listed, counted bad line, never coerced;
an empty dataset or a selection matching nothing is an error; the protocol comes from whole
records, never from a file's first bytes.
"""

from __future__ import annotations

import json
import time

import pytest

from evoci.swe_bench_cl.demo import build_cl_demo
from tests.reliability.helpers import run_evoci

pytestmark = pytest.mark.usefixtures("prefect_server")


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(done, message: str, place) -> None:
    assert done.returncode == 2, done.output
    assert done.stderr.startswith("evoci: ") and message in done.stderr, done.stderr
    assert not (place / "home" / "evoci.duckdb").exists()  # no run was recorded
    assert not (place / "home" / "runs").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["demo", "--agent", "replya"], "unknown swe-ci agent 'replya' (did you mean 'replay'?) — choose one of: replay, llm"),
    (["demo", "--agent-option", "speed=fast"], "unknown option of the replay agent 'speed' — choose from: (none)"),
    (["swe-evo-demo", "--agent", "gold", "--agent-option", "pth=x"], "unknown option of the gold agent 'pth'"),
    (["nitr", "--agent", "reference", "--agent-option", "soluton=intended"],
     "unknown option of the reference agent 'soluton' (did you mean 'solution'?)"),
    (["swe-bench-cl-demo", "--agent", "nul"], "unknown swe-bench-cl agent 'nul' (did you mean 'null'?)"),
    (["demo", "--agent", "command", "--agent-option", "comand=[\"x\"]"], "unknown option 'comand' (did you mean 'command'?)"),
    (["demo", "--sandbox-option", "memry=1g"], "unknown option of the local sandbox 'memry'"),
    (["demo", "--sandbox", "docker", "--sandbox-option", "memry=1g"], "unknown docker sandbox option(s) 'memry'"),
    (["nitr", "--select", "dimension=D10"], "--select dimension=D10 matches no probe of nitr"),
])
def test_bad_configuration_is_refused_before_a_run_is_recorded(place, capsys, args, message):
    refused(run_evoci(capsys, "run", *args, "--home", "home"), message, place)


def test_an_empty_dataset_is_refused(place, capsys):
    (place / "empty.jsonl").write_text("\n\n")
    refused(run_evoci(capsys, "run", "empty.jsonl", "--home", "home"), "the dataset holds no task", place)
    (place / "records").mkdir()
    refused(run_evoci(capsys, "run", "records", "--home", "home"), "the folder holds no .json record", place)


def test_bad_task_lines_are_listed_counted_and_never_coerced(place, capsys):
    base = {"task_id": "t", "repo": "nowhere", "base_ref": "a", "oracle_ref": "b"}
    lines = [json.dumps({**base, "task_id": "typo", "tets_dir": "tests"}),
             json.dumps({**base, "task_id": "negative", "test_timeout_s": -5}),
             json.dumps({**base, "task_id": "text", "test_timeout_s": "60"}),
             json.dumps({**base, "task_id": "listed", "repo": ["nowhere"]}),
             json.dumps({**base, "task_id": "escape", "tests_dir": "../../elsewhere"}),
             json.dumps({**base, "task_id": "huge", "metadata": {"blob": "x" * 50_000_000}})]
    (place / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    done = run_evoci(capsys, "run", "tasks.jsonl", "--home", "home")
    took = time.monotonic() - started
    out = done.stdout
    assert "tasks.jsonl:1: unknown field 'tets_dir' (did you mean 'tests_dir'?)" in out
    assert "tasks.jsonl:2: invalid task (test_timeout_s: Input should be greater than 0)" in out
    assert "tasks.jsonl:3: invalid task (test_timeout_s: Input should be a valid number)" in out
    assert "tasks.jsonl:4: invalid task (repo: must be a string path, got list)" in out
    assert "tasks.jsonl:5: invalid task (tests_dir '../../elsewhere' must be a folder inside the repository" in out
    assert "tasks.jsonl:6: the line is 50.0 MB, over the 1 MiB a task line may hold" in out
    assert "dataset: 6 record(s), 0 loaded, 6 not loaded (listed above)" in out
    assert done.returncode == 1  # nothing it could score: never a clean exit
    assert len(done.output) < 100_000  # the 50 MB value is never echoed
    assert took < 120


def test_a_curriculum_passed_by_path_is_read_as_swe_bench_cl(place, capsys):
    """The project's own demo curriculum (its tasks carry instance_id and FAIL_TO_PASS) goes to SWE-Bench-CL."""
    curriculum = build_cl_demo(place / "cl")
    done = run_evoci(capsys, "run", str(curriculum), "--home", "home", "--agent", "nothing")
    refused(done, "unknown swe-bench-cl agent 'nothing'", place)


def test_a_folder_whose_record_is_large_is_read_as_swe_evo(place, capsys):
    """A record of ~1.5 M characters: a prefix of the file never decides the protocol."""
    (place / "records").mkdir()
    record = {"repo": "o/r", "problem_statement": "n" * 1_500_000, "base_commit": "a" * 40,
              "instance_id": "o__r-1", "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []}
    (place / "records" / "a.json").write_text(json.dumps(record, indent=1))
    done = run_evoci(capsys, "run", "records", "--home", "home", "--agent", "nothing")
    refused(done, "unknown swe-evo agent 'nothing'", place)


def test_records_of_two_protocols_ask_for_protocol(place, capsys):
    (place / "mixed.jsonl").write_text(
        json.dumps({"task_id": "t", "repo": "r", "base_ref": "a", "oracle_ref": "b"}) + "\n"
        + json.dumps({"instance_id": "i", "FAIL_TO_PASS": [], "PASS_TO_PASS": []}) + "\n")
    refused(run_evoci(capsys, "run", "mixed.jsonl", "--home", "home"),
            "records of more than one protocol (1 swe-ci, 1 swe-evo) — split the dataset, or pass --protocol", place)
