"""Loading SWE-bench-format SWE-EVO records: every public field, bad records, answers kept apart."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evoci.errors import DatasetError
from evoci.swe_evo.loader import load_swe_evo
from evoci.swe_evo.prompt import task_prompt

FIXTURE = Path(__file__).parent / "fixtures" / "widgets_record.json"


@pytest.fixture
def dataset(tmp_path):
    """The project-made record (every field of the public data) next to a 'clone' under repos/."""
    (tmp_path / "repos" / "example__widgets").mkdir(parents=True)
    shutil.copy(FIXTURE, tmp_path / "records.json")
    return tmp_path


def test_a_public_format_record_loads(dataset):
    data = load_swe_evo(dataset / "records.json", repos_dir=dataset / "repos")
    assert data.errors == []
    [instance] = data.instances
    assert instance.instance_id == "example__widgets_v1.0.0_v1.1.0"
    assert instance.repo_path == str((dataset / "repos" / "example__widgets").absolute())
    assert instance.f2p == ("tests/test_core.py::test_spin_counts_turns",)  # duplicates dropped
    assert instance.p2p == ("tests/test_core.py::test_spin[a", "tests/test_core.py::test_spin[/tmp/x/data.txt]")  # a JSON string
    assert (instance.test_cmds, instance.log_parser) == ("pytest --continue-on-collection-errors -rA", "parse_log_pytest_options")
    assert instance.end_ref == "1" * 40
    assert [(p.number, p.title, p.is_issue) for p in instance.prs] == [(12, None, False), (11, "spin should count", True)]
    record = json.loads(FIXTURE.read_text())
    assert instance.answers.patch == record["patch"] and instance.answers.test_patch == record["test_patch"]
    assert instance.answers.pr_patches[0]["changed_test_files"] == ["tests/test_core.py"]


def test_what_the_agent_is_given_holds_no_answer(dataset):
    [instance] = load_swe_evo(dataset / "records.json", repos_dir=dataset / "repos").instances
    visible = instance.task().model_dump_json() + task_prompt(instance.task())
    record = json.loads(FIXTURE.read_text())
    for answer in ("widget.turns += 1", "def test_spin_counts_turns", "changed_test_files", "patch"):
        assert answer not in visible
    assert "spin should count" in visible and "#12" in visible and "(no title)" in visible
    assert record["problem_statement"].strip() in visible


def test_bad_records_are_reported_and_the_others_load(dataset):
    good = json.loads(FIXTURE.read_text())
    lines = [json.dumps(good), "not json", json.dumps({**good, "instance_id": "no-f2p", "FAIL_TO_PASS": None} | {}),
             json.dumps({k: v for k, v in good.items() if k != "base_commit"} | {"instance_id": "x"}),
             json.dumps({**good, "instance_id": "elsewhere", "repo": "other/repo"}), json.dumps(good),
             json.dumps({**good, "instance_id": "nose-ish", "log_parser": "parse_log_nose"})]
    (dataset / "records.jsonl").write_text("\n".join(lines) + "\n")
    data = load_swe_evo(dataset / "records.jsonl", repos_dir=dataset / "repos")
    assert [i.instance_id for i in data.instances] == ["example__widgets_v1.0.0_v1.1.0"]
    messages = [str(e) for e in data.errors]
    assert len(messages) == 6
    assert "records.jsonl:2: not JSON" in messages[0]
    assert "FAIL_TO_PASS must be a list" in messages[1]
    assert "lacks base_commit" in messages[2]
    assert "no local repository for 'other/repo'" in messages[3] and "other__repo" in messages[3]
    assert "duplicate instance_id" in messages[4]
    assert "unknown log_parser 'parse_log_nose' — choose one of:" in messages[5]


def test_a_record_without_repository_says_how_to_give_one(dataset):
    data = load_swe_evo(dataset / "records.json")
    assert data.instances == []
    assert "--repos DIR" in str(data.errors[0])


def test_a_missing_dataset_is_a_clear_error(tmp_path):
    with pytest.raises(DatasetError, match="not found"):
        load_swe_evo(tmp_path / "nope.json")


def test_a_repository_archive_is_unpacked_once_by_content(tmp_path):
    import tarfile

    import git

    from evoci.swe_evo.repos import open_repository

    clone = tmp_path / "clone"
    clone.mkdir()
    git.Repo.init(clone)
    archive = tmp_path / "example__widgets.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(clone, arcname="widgets")
    first = open_repository(str(archive), tmp_path / "cache")
    assert (first / ".git").is_dir() and first.name == "widgets"
    assert open_repository(str(archive), tmp_path / "cache") == first
