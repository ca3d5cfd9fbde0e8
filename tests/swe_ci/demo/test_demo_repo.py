"""The built-in demo task: a reproducible history with a real gap and a real regression."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import pytest
from git import Repo, Tree

import evoci.swe_ci.demo
from evoci.demo_repo import AUTHOR, FIRST_DATE, DemoRepo, build_demo_repo, load_history
from evoci.errors import InputError
from evoci.swe_ci.demo import HISTORY_DIR, demo_task
from tests.swe_ci.demo import expected

COMMITS = range(len(expected.PASSING_WITH_ORACLE_TESTS))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRepo:
    return build_demo_repo(tmp_path_factory.mktemp("demo") / "semverkit", HISTORY_DIR)


@pytest.fixture(scope="module")
def runs(demo: DemoRepo, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, str]]]:
    """Test id → outcome for every commit, base to oracle: with the oracle's tests and with its own."""
    root = tmp_path_factory.mktemp("runs")
    repo = Repo(demo.path)
    oracle_tests = repo.commit(demo.oracle_sha).tree / "tests"
    jobs = []
    for index, sha in enumerate(demo.commits):
        tree = repo.commit(sha).tree
        judged = root / f"{index:02d}-oracle-tests"
        _export(tree, judged, skip="tests")
        _export(oracle_tests, judged / "tests")  # SWE-CI: the oracle's tests replace the commit's
        own = root / f"{index:02d}-own-tests"
        _export(tree, own)
        jobs += [judged, own]
    repo.close()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        outcomes = list(pool.map(_pytest_outcomes, jobs))
    return {"oracle": outcomes[0::2], "own": outcomes[1::2]}


def test_two_builds_at_once_give_identical_shas(demo: DemoRepo, tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        first, second = pool.map(build_demo_repo, [tmp_path / "a", tmp_path / "b"], [HISTORY_DIR] * 2)
    assert first.commits == second.commits == demo.commits
    assert (first.base_sha, first.oracle_sha) == (demo.commits[0], demo.commits[-1])


def test_history_is_a_linear_main_branch_with_fixed_identity(demo: DemoRepo) -> None:
    assert len(demo.commits) == len(expected.PASSING_WITH_ORACLE_TESTS) >= 9  # base + at least 8
    repo = Repo(demo.path)
    assert repo.active_branch.name == "main"
    assert repo.commit("base").hexsha == demo.base_sha
    assert repo.commit("oracle").hexsha == demo.oracle_sha == repo.head.commit.hexsha
    commits = list(reversed(list(repo.iter_commits("oracle"))))
    assert tuple(c.hexsha for c in commits) == demo.commits
    for index, commit in enumerate(commits):
        assert len(commit.parents) == (0 if index == 0 else 1)
        assert commit.author == commit.committer == AUTHOR
        assert commit.authored_datetime == commit.committed_datetime == FIRST_DATE + timedelta(days=index)
        subject, _, body = commit.message.partition("\n\n")
        assert len(subject) <= 72 and "\n" not in subject, subject
        assert body.strip(), f"{subject!r} has no body saying why"
    assert not repo.is_dirty(untracked_files=True)
    repo.close()


def test_history_folders_become_the_commits(demo: DemoRepo) -> None:
    history = load_history(HISTORY_DIR)
    assert [step.name[:2] for step in history] == [f"{i:02d}" for i in range(len(history))]
    repo = Repo(demo.path)
    for step, sha in zip(history, demo.commits):
        tree = repo.commit(sha).tree
        for path, content in step.files.items():
            assert (tree / path).data_stream.read() == content
        for path in step.deletions:
            with pytest.raises(KeyError):
                tree / path
    repo.close()


def test_oracle_passes_every_one_of_its_tests(runs: dict[str, list[dict[str, str]]]) -> None:
    at_oracle = runs["oracle"][-1]
    assert expected.ORACLE_TESTS >= 40
    assert len(at_oracle) == expected.ORACLE_TESTS
    assert set(at_oracle.values()) == {"passed"}


@pytest.mark.parametrize("index", COMMITS)
def test_pass_count_with_the_oracle_tests(runs: dict[str, list[dict[str, str]]], index: int) -> None:
    outcomes = runs["oracle"][index]
    assert len(outcomes) == expected.ORACLE_TESTS  # every oracle test is collected, none is missing
    assert _passed(outcomes) == expected.PASSING_WITH_ORACLE_TESTS[index]


@pytest.mark.parametrize("index", COMMITS)
def test_each_commit_passes_its_own_tests(runs: dict[str, list[dict[str, str]]], index: int) -> None:
    outcomes = runs["own"][index]
    assert outcomes and set(outcomes.values()) == {"passed"}


def test_base_leaves_a_real_gap() -> None:
    base, oracle = expected.PASSING_WITH_ORACLE_TESTS[0], expected.PASSING_WITH_ORACLE_TESTS[-1]
    assert oracle == expected.ORACLE_TESTS
    assert 0.2 <= base / oracle <= 0.5


def test_the_only_regression_is_the_declared_one(runs: dict[str, list[dict[str, str]]]) -> None:
    regressions = set()
    for index in COMMITS[1:]:
        before, after = runs["oracle"][index - 1], runs["oracle"][index]
        regressions |= {(index, t) for t, outcome in before.items() if outcome == "passed" and after[t] != "passed"}
    assert regressions == {(expected.REGRESSION_BREAKS_AT, t) for t in expected.REGRESSED_TESTS}
    for test_id in expected.REGRESSED_TESTS:
        history = [runs["oracle"][i][test_id] == "passed" for i in COMMITS]
        broken = range(expected.REGRESSION_BREAKS_AT, expected.REGRESSION_FIXED_AT)
        assert history == [i not in broken for i in COMMITS]


def test_reusing_a_build_rewrites_nothing(demo: DemoRepo) -> None:
    git_dir = demo.path / ".git"
    before = {p: p.stat().st_mtime_ns for p in git_dir.rglob("*")}
    sentinel = demo.path / "left-by-a-user.txt"
    sentinel.write_text("still here")
    try:
        assert build_demo_repo(demo.path, HISTORY_DIR) == demo
        assert sentinel.read_text() == "still here"
        assert {p: p.stat().st_mtime_ns for p in git_dir.rglob("*")} == before
    finally:
        sentinel.unlink()


def test_an_outdated_build_is_replaced(tmp_path: Path) -> None:
    first = build_demo_repo(tmp_path / "demo", HISTORY_DIR)
    marker = first.path / ".git" / "evoci-demo.json"
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "fingerprint": "from an older evoci"}))
    again = build_demo_repo(tmp_path / "demo", HISTORY_DIR)
    assert again == first
    assert json.loads(marker.read_text())["fingerprint"] != "from an older evoci"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]  # no staging folders left behind


def test_refuses_to_overwrite_a_folder_that_is_not_a_demo_build(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not an evoci demo repository"):
        build_demo_repo(tmp_path, HISTORY_DIR)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_demo_task_points_at_the_tags(demo: DemoRepo) -> None:
    task = demo_task(demo.path)
    assert (task.task_id, task.repo, task.base_ref, task.oracle_ref) == ("demo", str(demo.path), "base", "oracle")
    assert task.metadata["title"]
    assert task.test_command == ("python", "-m", "pytest", "tests") and task.pythonpath == ("src", ".")


def test_package_exports() -> None:
    assert sorted(evoci.swe_ci.demo.__all__) == ["HISTORY_DIR", "demo_task"]
    assert HISTORY_DIR == Path(evoci.swe_ci.demo.__file__).parent / "history"


# -- helpers ------------------------------------------------------------------------------


def _export(tree: Tree, dest: Path, skip: str | None = None) -> None:
    """Write the files of ``tree`` under ``dest``, leaving out its top-level entry ``skip``."""
    for item in tree.traverse():
        if item.type != "blob" or (skip and item.path.split("/")[0] == skip):
            continue
        relative = Path(item.path).relative_to(tree.path) if tree.path else Path(item.path)
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.data_stream.read())


def _pytest_outcomes(workspace: Path) -> dict[str, str]:
    """Run the workspace's tests as evoci does (PYTHONPATH=src:.); test id → outcome.

    Only the json-report plugin is loaded: the counts must not depend on whichever other
    plugins are installed, and skipping their import halves the run time.
    """
    report = workspace.with_name(workspace.name + ".json")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(["src", "."]), "PYTHONDONTWRITEBYTECODE": "1"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    command = [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "-p", "pytest_jsonreport.plugin"]
    command += ["--json-report", f"--json-report-file={report}"]
    done = subprocess.run(command, cwd=workspace, env=env, capture_output=True, text=True, timeout=120)
    assert report.exists(), done.stdout + done.stderr
    return {test["nodeid"]: test["outcome"] for test in json.loads(report.read_text())["tests"]}


def _passed(outcomes: dict[str, str]) -> int:
    return sum(outcome == "passed" for outcome in outcomes.values())
