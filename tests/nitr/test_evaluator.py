"""Evaluator modules: file checks, check verdicts, broken installs, API-mode answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoci.nitr.agents import parse_files_answer
from evoci.nitr.evaluator import NitrEvaluatorError, _check_verdict, evaluate
from evoci.nitr.file_checks import baseline_diff, frozen_paths, required_paths, source_analysis
from evoci.nitr.pipeline import Module, parse_pipeline
from evoci.sandbox.base import ExecResult


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.fixture
def trees(tmp_path):
    base = tree(tmp_path / "baseline", {"app/main.py": "main\n", "src/core.py": "x = 1\n", "src/old.py": "old\n"})
    case = tree(tmp_path / "case", {"app/main.py": "main changed\n", "src/core.py": "x = 1\n", "src/new.py": "new\n"})
    return case, base


def module(kind: str, **settings) -> Module:
    return Module(module_name=kind, name=kind, settings=settings)


def test_path_modules(trees):
    case, base = trees
    assert required_paths(module("required_paths", paths=["src/core.py", "src/old.py"]), case, base) == [
        "missing required path: src/old.py"]
    assert frozen_paths(module("frozen_paths", paths=["app/main.py", "src/core.py", "src/old.py"]), case, base) == [
        "frozen path modified: app/main.py", "frozen path deleted: src/old.py"]
    assert baseline_diff(module("baseline_diff"), case, base) == [
        "modified: app/main.py", "created: src/new.py", "deleted: src/old.py"]
    assert baseline_diff(module("baseline_diff", allow_modified=["app/main.py"], allowed_created_top_levels=["src"],
                                allow_deleted=["src/old.py"]), case, base) == []


def test_source_analysis_rules_and_global_rules(tmp_path):
    case = tree(tmp_path, {"src/a.py": "import stats  # fine?\nvalue = 2\n", "src/b.py": "# import stats\n"})
    rules = [{"id": "no_stats", "message": "stats at {location}", "any_patterns": [r"^\s*import stats"]}]
    assert source_analysis(module("source_analysis", rules=rules), case, case) == ["stats at src/a.py:1"]
    stripped = module("source_analysis", rules=rules, normalize="strip_comments", scan_roots=["src/b.py"])
    assert source_analysis(stripped, case, case) == []
    at_most_one = [{"id": "v", "message": "too many", "max_matching_files": 0, "any_substrings": ["value"]}]
    assert source_analysis(module("source_analysis", global_rules=at_most_one), case, case) == [
        "too many (1 matching file(s))"]


@pytest.mark.parametrize("stdout, exit_code, verdict", [
    ("PASS: fine\n", 0, (True, [])),
    ("PASS: a\nFAIL: b\n", 0, (False, ["FAIL: b"])),
    ("", 1, (False, ["the check exited with code 1"])),  # a crash is the agent's outcome
    ('checking\n{"passed": false, "findings": ["x"]}\n', 1, (False, ["x"])),
    ('{"passed": true, "findings": []}', 0, (True, [])),
])
def test_check_verdicts(stdout, exit_code, verdict):
    assert _check_verdict(ExecResult(exit_code=exit_code, stdout=stdout, stderr="", duration_s=0.1)) == verdict


class Missing:
    """A sandbox whose tools are not installed (exit 127, as a shell reports it)."""

    workspace = Path(".")

    def exec(self, cmd, **kwargs):
        return ExecResult(exit_code=127, stdout="", stderr=f"{cmd[0]}: not found", duration_s=0.0)


def test_a_broken_evaluator_install_is_infrastructure(tmp_path):
    pipeline = parse_pipeline({"modules": [
        {"module_name": "unit_test", "name": "t", "command": ["python", "{evaluator_root}/tests/t.py"]},
        {"module_name": "required_paths", "name": "p", "paths": []}]}, "p.json")
    with pytest.raises(NitrEvaluatorError, match="evaluator/tests/t.py missing"):
        evaluate(pipeline, Missing(), tmp_path, ceiling_s=10)
    tree(tmp_path, {"evaluator/tests/t.py": ""})
    with pytest.raises(NitrEvaluatorError, match="could not start 'python'"):
        evaluate(pipeline, Missing(), tmp_path, ceiling_s=10)


@pytest.mark.parametrize("answer, files, problem", [
    ('{"files": [{"filename": "src/a.py", "content": "x"}]}', {"src/a.py": "x"}, ""),
    ('```json\n{"files": [{"filename": "./a.py", "content": ""}]}\n```', {"a.py": ""}, ""),
    ("I changed a.py", None, "not JSON"),
    ('{"files": []}', None, 'no non-empty "files" list'),
    ('{"files": [{"filename": "a.py"}]}', None, "needs string fields"),
    ('{"files": [{"filename": "../x.py", "content": ""}]}', None, "must be a path inside"),
    ('{"files": [{"filename": ".evoci/p", "content": ""}]}', None, "must be a path inside"),
])
def test_api_answers_are_validated(answer, files, problem):
    got, why = parse_files_answer(answer)
    assert got == files and problem in why


class Unconfigured:
    """A sandbox where the pipeline's build was never set up (as with the public suite's shared CMake project)."""

    workspace = Path(".")

    def __init__(self, stderr: str, exit_code: int):
        self.stderr, self.exit_code = stderr, exit_code

    def exec(self, cmd, **kwargs):
        return ExecResult(exit_code=self.exit_code, stdout="", stderr=self.stderr, duration_s=0.0)


@pytest.mark.parametrize("kind, stderr, exit_code, meaning", [
    ("build", "Error: could not load cache", 1, "never configured"),
    ("unit_test", "No tests were found!!!", 0, "found no test to run"),  # exit 0: would have passed
])
def test_a_build_the_harness_never_set_up_is_infrastructure_not_a_score(tmp_path, kind, stderr, exit_code, meaning):
    pipeline = parse_pipeline({"modules": [
        {"module_name": kind, "name": "m", "command": ["cmake", "--build", "{build_dir}"]},
        {"module_name": "unit_test", "name": "t", "command": ["ctest", "--test-dir", "{build_dir}"]},
        {"module_name": "required_paths", "name": "p", "paths": []}]}, "p.json")
    with pytest.raises(NitrEvaluatorError, match=meaning):
        evaluate(pipeline, Unconfigured(stderr, exit_code), tmp_path, ceiling_s=10)
