"""Evaluator modules: file checks, check verdicts, broken installs, API-mode answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evoci.agents.base import AgentStatus
from evoci.nitr.agents import materialize, parse_files_answer
from evoci.nitr.evaluator import NitrEvaluatorError, evaluate
from evoci.nitr.file_checks import baseline_diff, frozen_paths, required_paths, run_check, source_analysis
from evoci.nitr.pipeline import Module, parse_pipeline
from evoci.sandbox.base import ExecResult


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


PLACES = {"case_root": "case", "baseline_case_root": "baseline", "evaluator_root": "evaluator", "build_dir": "build",
          "repo_root": ".", "data_dir": "evaluator/data"}


@pytest.fixture
def root(tmp_path):
    tree(tmp_path / "baseline", {"app/main.py": "main\n", "src/core.py": "x = 1\n", "src/old.py": "old\n",
                                 "src/crlf.py": "a\nb\n", "CMakeLists.txt": "c\n"})
    tree(tmp_path / "case", {"app/main.py": "main changed\n", "src/core.py": "x = 1\n", "src/new.py": "new\n",
                             "src/deep/n.py": "n\n", "CMakeLists.txt": "c2\n"})
    (tmp_path / "case" / "src" / "crlf.py").write_bytes(b"a\r\nb\r\n")  # universal newlines: unchanged
    return tmp_path


def module(kind: str, **settings) -> Module:
    return Module(module_name=kind, name=kind, settings=settings)


def test_path_modules_follow_the_public_evaluator(root):
    assert required_paths(module("required_paths", paths=["src/core.py", "src/old.py"]), root, PLACES) == [
        "missing required path: src/old.py"]
    assert required_paths(module("required_paths", root="baseline_case_root", paths=["src/old.py"]), root, PLACES) == []
    assert frozen_paths(module("frozen_paths", paths=["app/main.py", "src/core.py", "src/old.py", "src/crlf.py",
                                                     "nowhere.py"]), root, PLACES) == [
        "frozen path missing from the agent's code: src/old.py", "frozen path missing from the agent's code: nowhere.py",
        "frozen path missing from the starter code: nowhere.py", "frozen path deleted: src/old.py",
        "frozen path modified: app/main.py"]
    # default globs src/**/* and app/**/*: files directly under src/ count, the top-level CMakeLists.txt does not
    assert baseline_diff(module("baseline_diff"), root, PLACES) == [
        "created: src/deep/n.py", "created: src/new.py", "deleted: src/old.py", "modified: app/main.py"]
    assert baseline_diff(module("baseline_diff", allow_modified=["app/main.py"], allowed_created_top_levels=["src"],
                                allow_deleted=["src/old.py"]), root, PLACES) == []
    assert baseline_diff(module("baseline_diff", include_globs=["*"], exclude_globs=["**/CMakeLists.txt"]),
                         root, PLACES) == []  # matched on the absolute path too, as the public evaluator does
    assert baseline_diff(module("baseline_diff", paths=["ghost.py"]), root, PLACES) == [
        "missing from the agent's code and the starter code: ghost.py",
        "missing from the starter code and the agent's code: ghost.py"]
    (root / "case" / "src" / "core.py").write_bytes(b"\xff\xfe")  # not UTF-8 text: the module fails
    assert run_check(module("frozen_paths", paths=["src/core.py"]), root, PLACES) == [
        "frozen_paths could not run: cannot read core.py as UTF-8 text (UnicodeDecodeError)"]


def test_source_analysis_scans_cpp_sources_by_default_and_applies_rules(tmp_path):
    tree(tmp_path / "case", {"src/a.cc": "int add(int a, int b) { return a + b; }  // add\n", "src/b.h": "/* add */\n",
                             "src/c.py": "add = 1\n", "src/d.cxx": "add\n", "app/m.cc": "add\n"})
    rule = [{"id": "add", "message": "{filename}:{line_no}", "any_patterns": [r"\badd\b"]}]
    assert source_analysis(module("source_analysis", rules=rule), tmp_path, PLACES) == ["a.cc:1", "b.h:1"]
    stripped = module("source_analysis", rules=rule, normalize="strip_comments", suffixes=[".h", ".py"])
    assert source_analysis(stripped, tmp_path, PLACES) == ["c.py:1"]
    assert source_analysis(module("source_analysis", rules=rule, scan_roots=["src", "app/m.cc"], stop_on_first_match=True),
                           tmp_path, PLACES) == ["m.cc:1"]  # files sorted by path; the first finding ends the module
    counted = [{"id": "g", "message": "{matching_file_count}", "min_matching_files": 3, "any_substrings": ["add"]},
               {"id": "h", "message": "{matching_files}", "max_matching_files": 1, "any_substrings": ["add"]}]
    assert source_analysis(module("source_analysis", global_rules=counted), tmp_path, PLACES) == ["2", "src/a.cc, src/b.h"]
    strings = [{"id": "s", "message": "{location}", "any_substrings": ["return"]}]
    tree(tmp_path / "case", {"src/e.cc": 'const char* s = "return";\nint f() { return 1; }\n'})
    assert source_analysis(module("source_analysis", rules=strings, normalize="strip_comments_and_strings",
                                  scan_roots=["src/e.cc"]), tmp_path, PLACES) == ["src/e.cc:2"]


class Scripted:
    """A sandbox whose commands end as given: the tested code's exit code, then the harness's own lookup."""

    workspace = Path(".")

    def __init__(self, exit_code: int, stdout: str = "", tool_exists: bool = True):
        self.exit_code, self.stdout, self.tool_exists = exit_code, stdout, tool_exists

    def exec(self, cmd, **kwargs):
        if cmd[:2] == ["sh", "-c"]:
            return ExecResult(exit_code=0 if self.tool_exists else 1, stdout="", stderr="", duration_s=0.0)
        return ExecResult(exit_code=self.exit_code, stdout=self.stdout, stderr="", duration_s=0.0)


def pipeline_of(*modules) -> object:
    return parse_pipeline({"modules": [*modules, {"module_name": "required_paths", "name": "p", "paths": ["x"]}]},
                          "p.json")


def test_a_broken_evaluator_install_is_infrastructure(tmp_path):
    pipeline = pipeline_of({"module_name": "unit_test", "name": "t", "command": ["python", "{evaluator_root}/tests/t.py"]})
    with pytest.raises(NitrEvaluatorError, match="evaluator/tests/t.py missing"):
        evaluate(pipeline, Scripted(127, tool_exists=False), tmp_path, ceiling_s=10)
    tree(tmp_path, {"evaluator/tests/t.py": ""})
    with pytest.raises(NitrEvaluatorError, match="the sandbox has no 'python'"):
        evaluate(pipeline, Scripted(127, tool_exists=False), tmp_path, ceiling_s=10)


@pytest.mark.parametrize("exit_code, stdout, passed", [
    (127, "", False),  # the tested code exits 127 itself: the tool exists, so it is the agent's failure
    (1, "Error: could not load cache\n", False),
    (0, "*** No tests were found!!!\nTotal Tests: 0\n", False),  # ctest: at least one test expected
    (0, "100% tests passed\nTotal Tests: 1\n", True),
    (0, "Total Tests: " + "9" * 5000 + "\n100% tests passed\nTotal Tests: 1\n", True),  # past int()'s digit limit
])
def test_what_the_tested_code_prints_or_returns_is_its_outcome_never_infrastructure(tmp_path, exit_code, stdout, passed):
    pipeline = pipeline_of({"module_name": "unit_test", "name": "t", "command": ["ctest", "--test-dir", "{build_dir}"]})
    grade = evaluate(pipeline, Scripted(exit_code, stdout), tmp_path, ceiling_s=10)
    assert grade.status == "ok" and grade.outcomes["unit_test:t"] == ("passed" if passed else "failed")


def test_a_check_passes_by_exit_code_and_a_failed_build_is_e_after_every_module_ran(tmp_path):
    pipeline = pipeline_of({"module_name": "build", "name": "b", "command": "make -C {build_dir}"},
                           {"module_name": "customized_check", "name": "c", "command": ["python3", "c.py"]},
                           {"module_name": "unit_test", "name": "t", "command": ["python3", "t.py"]})
    grade = evaluate(pipeline, Scripted(1, '{"passed": false, "findings": ["x"]}'), tmp_path, ceiling_s=10)
    assert grade.status == "build_error" and grade.outcomes == {}
    assert [(m.name, m.passed, m.findings) for m in grade.modules] == [
        ("b", False, ["exited with code 1"]), ("c", False, ["exited with code 1", "x"]),
        ("t", False, ["exited with code 1"]), ("p", False, ["missing required path: x"])]


@pytest.mark.parametrize("answer, files, problem", [
    ('{"files": [{"filename": "src/a.py", "content": "x"}]}', {"src/a.py": "x"}, ""),
    ('```json\n{"files": [{"filename": "./a.py", "content": ""}]}\n```', {"a.py": ""}, ""),
    ("I changed a.py", None, "not JSON"),
    ("[" * 100_000 + "]" * 100_000, None, "not JSON (nested too deeply to read)"),  # json raises RecursionError
    ('{"files": []}', None, 'no non-empty "files" list'),
    ('{"files": [{"filename": "a.py"}]}', None, "needs string fields"),
    ('{"files": [{"filename": "../x.py", "content": ""}]}', None, "must be a path inside"),
    ('{"files": [{"filename": ".evoci/p", "content": ""}]}', None, "must be a path inside"),
    ('{"files": [{"filename": "./.evoci/p", "content": ""}]}', None, "must be a path inside"),
    ('{"files": [{"filename": "./../x.py", "content": ""}]}', None, "must be a path inside"),
    ('{"files": [{"filename": "src//./a.py", "content": "x"}]}', {"src/a.py": "x"}, ""),
    ('{"files": [{"filename": "./.github/ci.yml", "content": "x"}]}', {".github/ci.yml": "x"}, ""),
])
def test_api_answers_are_validated(answer, files, problem):
    got, why = parse_files_answer(answer)
    assert got == files and problem in why


class TreeOnly:
    """What materialize needs of a sandbox: writing into a workspace folder, no-follow (as every sandbox does)."""

    def __init__(self, workspace: Path):
        self.workspace = workspace

    def write_file(self, path: str, content) -> None:
        from evoci.sandbox.base import write_inside

        write_inside(self.workspace, path, content)


@pytest.mark.parametrize("filename, content, problem", [
    ("src/a\u0000.py", "x", "contains a NUL character"),
    (".", "x", "names a folder, not a file"),
    ("./.", "x", "names a folder, not a file"),
    ("src/", "x", "names a folder, not a file"),
    ("..", "x", "must be a path inside"),
    ("/etc/passwd", "x", "must be a path inside"),
    ("src/" + "a" * 300 + ".py", "x", "has a name longer than 255 bytes"),
    ("/".join(["b" * 200] * 30), "x", "is longer than 4095 bytes"),
    ("src/\udcff.py", "x", "is not valid text (a lone surrogate)"),
    ("src/a.py", "x = '\udcff'", "content is not valid text (a lone surrogate)"),
])
def test_an_answer_with_a_file_no_tree_can_hold_is_malformed_and_nothing_is_written(tmp_path, filename, content,
                                                                                     problem):
    # Each raised (ValueError, OSError, UnicodeEncodeError) while evoci wrote the answer: the step
    # node failed as the harness's fault and the probe went unscored. Now the whole answer is the
    # agent's invalid_output, like one without string fields, and no file of it is written.
    workspace = tree(tmp_path / "ws", {"src/a.py": "old\n"})
    (workspace / "leak.py").symlink_to(tmp_path / "outside.py")  # a link already in the tree
    files = [{"filename": "leak.py", "content": "through"}, {"filename": "src/new.py", "content": "n"}]
    answer = json.dumps({"files": [*files, {"filename": filename, "content": content}]})  # "\\udcff" as a model sends it
    status, message = materialize(answer, TreeOnly(workspace))
    assert status is AgentStatus.INVALID_OUTPUT and problem in message, message
    assert (workspace / "src/a.py").read_text() == "old\n" and not (workspace / "src/new.py").exists()
    assert (workspace / "leak.py").is_symlink() and not (tmp_path / "outside.py").exists()
    # The same answer without the bad file is written, never through the link.
    good = json.dumps({"files": files})
    assert materialize(good, TreeOnly(workspace))[0] is AgentStatus.OK
    assert not (workspace / "leak.py").is_symlink() and (workspace / "leak.py").read_text() == "through"
    assert not (tmp_path / "outside.py").exists() and (workspace / "src/new.py").read_text() == "n"


def test_restoring_the_grading_tree_puts_back_what_the_harness_built_and_keeps_the_build_folder(tmp_path):
    import os

    from evoci.nitr.trees import restore_tree

    pristine, root = tmp_path / "pristine", tmp_path / "tree"
    for tree in (pristine, root):
        (tree / "evaluator" / "checks").mkdir(parents=True)
        (tree / "evaluator" / "checks" / "check.py").write_text("print('FAIL')\n")
        (tree / "case" / "src").mkdir(parents=True)
        (tree / "case" / "src" / "a.py").write_text("A = 1\n")
        (tree / "build").mkdir()
    # what tested code may leave: a rewritten check, a link where a folder was, a new file, build output
    (root / "evaluator" / "checks" / "check.py").write_text("print('PASS')\n")
    (root / "case" / "src" / "a.py").unlink()
    (root / "case" / "src").rmdir()
    os.symlink(str(tmp_path / "elsewhere"), root / "case" / "src")
    (root / "planted.py").write_text("x\n")
    (root / "build" / "app").write_text("binary\n")
    restore_tree(root, pristine, "build")
    assert (root / "evaluator" / "checks" / "check.py").read_text() == "print('FAIL')\n"
    assert not (root / "case" / "src").is_symlink() and (root / "case" / "src" / "a.py").read_text() == "A = 1\n"
    assert not (root / "planted.py").exists() and (root / "build" / "app").read_text() == "binary\n"
    assert not (tmp_path / "elsewhere").exists()  # nothing was written through the link
