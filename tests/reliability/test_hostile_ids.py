"""Ids are names, never paths: hostile task, instance, probe, sequence and run ids, from a dataset
of each protocol and from the command line, change no file outside the home.

The canary is every file beside the home (the dataset, a canary file, the folder the ids point
at), hashed before and after the real `evoci run`.
"""

from __future__ import annotations

import json
import shutil

import pytest

from evoci.nitr.suites import PROBES
from tests.reliability.helpers import run_evoci, snapshot

pytestmark = pytest.mark.usefixtures("prefect_server")

# ../../../x from <home>/runs/<run>/<task> is the folder beside the home.
HOSTILE = ["../../../escaped", "", "..", "x/workspace", "tab\there", "bell\x07", "nul\x00", "/abs/path"]


@pytest.fixture
def place(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "canary.txt").write_text("must not change\n")
    return tmp_path


def skipped(done) -> int:
    """How many records the console listed as skipped."""
    return sum(line.startswith("skipped: ") for line in done.stdout.splitlines())


def check_nothing_outside(place, before):
    assert snapshot(place, place / "home") == before
    assert not (place / "escaped").exists()


def test_swe_ci_dataset_ids(place, capsys):
    lines = [{"task_id": t, "repo": "nowhere", "base_ref": "a", "oracle_ref": "b"} for t in [*HOSTILE, "x"]]
    (place / "tasks.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    with (place / "tasks.jsonl").open("ab") as f:
        f.write(b'{"task_id": "bad\xff", "repo": "nowhere", "base_ref": "a", "oracle_ref": "b"}\n')
    before = snapshot(place, place / "home")
    done = run_evoci(capsys, "run", "tasks.jsonl", "--home", "home")
    check_nothing_outside(place, before)
    assert skipped(done) == len(HOSTILE) + 1
    assert "contains a path separator" in done.output and "is not valid UTF-8" not in done.output
    assert "not UTF-8 (byte 17)" in done.output and "contains the control character U+0007" in done.output
    assert "dataset: 10 record(s), 1 loaded, 9 not loaded" in done.output
    assert done.returncode == 1  # lines that did not load leave the run partial: never a clean exit
    # the one good id ran (and ended on its missing repository), in its own folder
    runs = [p for p in (place / "home" / "runs").iterdir()]
    assert [sorted(q.name for q in p.iterdir()) for p in runs] == [["x"]]


@pytest.mark.parametrize("run_id", [*HOSTILE, "\udcff"])
@pytest.mark.parametrize("dataset", ["demo", "swe-evo-demo", "nitr", "swe-bench-cl-demo"])
def test_run_ids_from_the_command_line(place, capsys, run_id, dataset):
    before = snapshot(place, place / "home")
    done = run_evoci(capsys, "run", dataset, "--home", "home", "--run-id", run_id)
    assert done.returncode == 2
    assert done.stderr.startswith(f"evoci: run id {run_id!r} ")
    check_nothing_outside(place, before)
    assert not (place / "home" / "runs").exists() and not (place / "home" / "evoci.duckdb").exists()


def evo_record(instance_id: str) -> dict:
    return {"instance_id": instance_id, "repo": "o/r", "base_commit": "a" * 40, "problem_statement": "notes",
            "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": [], "repo_path": "nowhere"}


def test_swe_evo_dataset_ids(place, capsys):
    (place / "records").mkdir()
    for k, instance_id in enumerate(HOSTILE):
        (place / "records" / f"{k}.json").write_text(json.dumps(evo_record(instance_id)))
    before = snapshot(place, place / "home")
    done = run_evoci(capsys, "run", "records", "--home", "home", "--agent", "empty")
    check_nothing_outside(place, before)
    assert skipped(done) == len(HOSTILE)
    assert f"resolved 0 of {len(HOSTILE)} record(s); {len(HOSTILE)} not loaded" in done.output
    assert not (place / "home" / "runs").exists()
    report = run_evoci(capsys, "report", "--home", "home")  # the report says the same, from the results
    assert skipped(report) == len(HOSTILE)
    assert f"resolved 0 of {len(HOSTILE)} record(s); {len(HOSTILE)} not loaded" in report.stdout


def test_swe_bench_cl_dataset_ids(place, capsys):
    def task(instance_id, position):
        return {"metadata": {"instance_id": instance_id, "repo": "o/r", "base_commit": "a" * 40},
                "task": {"problem_statement": "fix it"},
                "evaluation": {"patch": "", "test_patch": "", "FAIL_TO_PASS": ["t"], "PASS_TO_PASS": []},
                "continual_learning": {"sequence_position": position}}
    sequences = [{"id": "../../../escaped", "repo": "o/r", "tasks": [task("fine", 1)]},
                 {"id": "s", "repo": "o/r", "repo_path": "nowhere",
                  "tasks": [task(i, k + 1) for k, i in enumerate(HOSTILE)]}]
    (place / "curriculum.json").write_text(json.dumps({"metadata": {}, "sequences": sequences}))
    before = snapshot(place, place / "home")
    done = run_evoci(capsys, "run", "curriculum.json", "--home", "home", "--agent", "gold")
    check_nothing_outside(place, before)
    assert "sequence id '../../../escaped' contains a path separator" in done.output
    assert skipped(done) == len(HOSTILE) + 1
    assert f"dataset: {len(HOSTILE) + 1} record(s), 0 loaded, {len(HOSTILE) + 1} not loaded" in done.stdout
    assert not (place / "home" / "runs").exists()


def test_nitr_case_folder_ids(place, capsys):
    root = place / "checkout"
    shutil.copytree(PROBES / "docs", root / "docs")
    shutil.copytree(PROBES / "cases" / "003.retry-setting-locality", root / "cases" / "003.retry\x07setting")
    shutil.copytree(PROBES / "evaluator" / "003.retry-setting-locality", root / "evaluator" / "003.retry\x07setting")
    before = snapshot(place, place / "home")
    done = run_evoci(capsys, "run", f"nitr:{root}", "--home", "home")
    check_nothing_outside(place, before)
    assert "skipped: NITR case folder '003.retry\\x07setting' contains the control character U+0007" in done.output
    assert "0 of 1 case(s) evaluated (1 not loaded" in done.output
    assert done.returncode == 1
    report = run_evoci(capsys, "report", "--home", "home")
    assert skipped(report) == 1 and "0 of 1 case(s) evaluated (1 not loaded" in report.stdout
