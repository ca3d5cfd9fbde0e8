"""Loading the SWE-Bench-CL curriculum format: a project-made file with every field, from local clones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evoci.errors import DatasetError
from evoci.swe_bench_cl.demo import build_cl_demo
from evoci.swe_bench_cl.loader import load_swe_bench_cl
from evoci.swe_bench_cl.prompt import task_prompt

FIXTURE = Path(__file__).parent / "fixtures" / "curriculum.json"


@pytest.fixture
def repos(tmp_path):
    """Local clones, named as the loader looks for them (``owner__name``)."""
    for name in ("django__django", "sympy__sympy"):
        (tmp_path / "repos" / name).mkdir(parents=True)
    return tmp_path / "repos"


def test_the_public_format_loads_with_every_field(repos):
    data = load_swe_bench_cl(FIXTURE, repos_dir=repos)
    assert data.errors == []
    assert [(s.sequence_id, s.repo, s.n) for s in data.sequences] == [
        ("django_django_sequence", "django/django", 2), ("sympy_sympy_sequence", "sympy/sympy", 2)]
    first, second = data.sequences[0].issues
    assert (first.instance_id, first.position, first.difficulty, first.difficulty_score, first.created_at) == (
        "django__django-90001", 1, "<15 min fix", 1, "2026-01-05T10:00:00Z")
    assert first.hints_text == "See the ordering code in the query compiler."
    assert first.instance.f2p == ("test_first_keeps_ordering (ordering.tests.OrderingTests)",)
    assert len(first.instance.p2p) == 2
    assert first.instance.repo_path == str((repos / "django__django").absolute())
    # dependencies are kept as given: forward in the sequence, or in another sequence
    assert first.dependencies == ("django__django-90002",)
    assert second.dependencies == ("django__django-90001", "sympy__sympy-90101")
    assert second.modified_files == ("django/db/models/query.py",)
    assert second.instance.answers.patch.startswith("diff --git a/django/db/models/query.py")


def test_each_repository_is_graded_with_its_own_runner(repos):
    data = load_swe_bench_cl(FIXTURE, repos_dir=repos)
    django, sympy = data.sequences[0].issues[0].instance, data.sequences[1].issues[0].instance
    assert (django.log_parser, django.test_cmds.split()[0]) == ("parse_log_django", "./tests/runtests.py")
    assert (sympy.log_parser, sympy.test_cmds.split()[0]) == ("parse_log_sympy", "bin/test")


def test_an_environments_file_keyed_by_instance_id_sets_the_test_environment(repos, tmp_path):
    environments = tmp_path / "envs.json"
    environments.write_text(json.dumps([{"instance_id": "sympy__sympy-90102", "python": "3.9",
                                         "requirements": ["mpmath==1.3.0"], "environment_setup_commit": "5" * 40}]))
    data = load_swe_bench_cl(FIXTURE, repos_dir=repos, environments=environments)
    instance = data.sequences[1].issues[1].instance
    assert (instance.python, instance.requirements, instance.end_ref) == ("3.9", ("mpmath==1.3.0",), "5" * 40)


def test_a_bad_task_is_named_and_the_rest_loads(repos, tmp_path):
    curriculum = json.loads(FIXTURE.read_text())
    del curriculum["sequences"][0]["tasks"][1]["evaluation"]
    curriculum["sequences"][1]["tasks"][1]["continual_learning"]["sequence_position"] = 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(curriculum))
    data = load_swe_bench_cl(path, repos_dir=repos)
    assert [len(s.issues) for s in data.sequences] == [1, 1]
    messages = [str(e) for e in data.errors]
    assert len(messages) == 2
    assert "django_django_sequence" in messages[0] and "lacks evaluation" in messages[0]
    assert "sympy__sympy-90102 repeats the position" in messages[1]


def test_a_missing_clone_says_where_to_put_it(tmp_path):
    data = load_swe_bench_cl(FIXTURE, repos_dir=tmp_path)
    assert data.sequences[0].issues == ()
    assert "clone it there as django__django" in str(data.errors[0])
    with pytest.raises(DatasetError, match="curriculum not found"):
        load_swe_bench_cl(tmp_path / "nope.json")


def test_the_demo_sequence_has_six_issues_and_the_prompt_never_holds_an_answer(tmp_path):
    data = load_swe_bench_cl(build_cl_demo(tmp_path))
    [sequence] = data.sequences
    assert data.errors == [] and [i.position for i in sequence.issues] == [1, 2, 3, 4, 5, 6]
    # issue 5 rewrites what issue 1 and 2's tests check: a later solution can break an earlier issue
    assert "test_punctuation_removed" in " ".join(sequence.issues[4].instance.f2p)
    for issue in sequence.issues:
        prompt = task_prompt(issue, memory="")
        assert issue.problem_statement.strip() in prompt
        answers = issue.instance.answers
        assert answers.patch.strip() and answers.patch.strip() not in prompt
        assert not any(path in prompt for path in issue.modified_files)
        assert not any(test in prompt for test in issue.instance.f2p)



def test_each_issue_gets_its_environment_from_the_specs_of_its_repository_and_version(tmp_path):
    curriculum = json.loads(FIXTURE.read_text())
    sequence = curriculum["sequences"][1]  # made a requests sequence: evoci ships specs for psf/requests
    sequence["repo"] = "psf/requests"
    for task in sequence["tasks"]:
        task["metadata"]["repo"] = "psf/requests"
    sequence["tasks"][1]["version"] = "2.27"  # a task's own extra field
    path = tmp_path / "curriculum.json"
    path.write_text(json.dumps(curriculum))
    for name in ("django__django", "psf__requests"):
        (tmp_path / "repos" / name).mkdir(parents=True)
    records = tmp_path / "verified.jsonl"  # SWE-bench-style records give the other issue's version
    records.write_text(json.dumps({"instance_id": "sympy__sympy-90101", "version": "2.27"}) + "\n")
    data = load_swe_bench_cl(path, repos_dir=tmp_path / "repos", environments=records)
    issues = {i.instance_id: i.instance for s in data.sequences for i in s.issues}
    assert issues["sympy__sympy-90101"].spec.python == "3.9" and issues["sympy__sympy-90102"].spec.python == "3.9"
    assert issues["django__django-90001"].spec is None  # no django spec: the record's own fields, as before
    side = tmp_path / "specs.json"  # a spec side file instead: it overrides the shipped spec, as for SWE-EVO
    side.write_text(json.dumps({"psf/requests": [{"versions": ["2.27"], "python": "3.10", "packages": ["pytest"]}]}))
    overridden = load_swe_bench_cl(path, repos_dir=tmp_path / "repos", environments=side)
    issues = {i.instance_id: i.instance for s in overridden.sequences for i in s.issues}
    assert issues["sympy__sympy-90102"].spec.python == "3.10"
    assert overridden.content_hash != data.content_hash
