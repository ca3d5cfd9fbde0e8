"""The grading tree: the agent's source, the record's tests, no start-up hooks of the agent's."""

from __future__ import annotations

from pathlib import Path

import git
import pytest

from evoci.errors import InputError
from evoci.swebench.tree import is_test_code, make_grading_tree


@pytest.fixture
def source(tmp_path):
    root = tmp_path / "src-repo"
    (root / "pkg").mkdir(parents=True)
    (root / "tests" / "data").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (root / "tests" / "test_pkg.py").write_text("from pkg import VALUE\n\ndef test_value():\n    assert VALUE == 1\n")
    (root / "tests" / "data" / "expected.txt").write_text("1\n")
    (root / "tests" / "conftest.py").write_text("# the project's own\n")
    repo = git.Repo.init(root)
    repo.git.add("--all")
    repo.git.commit("-m", "base", env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                                        "GIT_COMMITTER_EMAIL": "t@t"})
    return repo


def diff(repo: git.Repo, files: dict[str, str]) -> str:
    """The git patch that writes ``files`` (path → text) over the base; the work tree is left clean."""
    root = repo.working_dir
    for path, text in files.items():
        target = Path(root) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    repo.git.add("--all")
    patch = repo.git.diff("--cached", "--binary") + "\n"
    repo.git.reset("--hard", "-q")
    repo.git.clean("-fdxq")
    return patch


def test_agent_test_edits_and_hooks_are_overridden_and_recorded(source, tmp_path):
    patch = diff(source, {
        "pkg/__init__.py": "VALUE = 2\n",
        "tests/test_pkg.py": "VALUE = 1\n\ndef test_value():\n    assert VALUE == 1\n",  # rigging an existing test
        "tests/data/expected.txt": "2\n",  # test data: a release may change it, so it is kept
        "conftest.py": "def pytest_collection_modifyitems(items): items.clear()\n",
        "pkg/sitecustomize.py": "import os\n",
        "pkg/evil.pth": "import os\n",
        "pkg/fake-1.0.dist-info/METADATA": "Name: fake\n",
        "tests/test_extra.py": "def test_free(): pass\n",
    })
    test_patch = diff(source, {"tests/test_new.py": "def test_new(): pass\n"})
    tree = make_grading_tree(tmp_path / "tree", source, source.head.commit.hexsha, patch, test_patch)
    assert (tree.patch_applied, tree.apply_method) == (True, "git apply")
    root = tree.path
    assert (root / "pkg" / "__init__.py").read_text() == "VALUE = 2\n"
    assert (root / "tests" / "test_pkg.py").read_text().startswith("from pkg import VALUE")
    assert (root / "tests" / "data" / "expected.txt").read_text() == "2\n"
    assert (root / "tests" / "test_new.py").exists() and (root / "tests" / "conftest.py").exists()
    for gone in ("conftest.py", "pkg/sitecustomize.py", "pkg/evil.pth", "pkg/fake-1.0.dist-info", "tests/test_extra.py"):
        assert not (root / gone).exists(), gone
    assert tree.overridden == ["conftest.py", "pkg/evil.pth", "pkg/fake-1.0.dist-info/",
                               "pkg/sitecustomize.py", "tests/test_extra.py", "tests/test_pkg.py"]


def test_an_empty_patch_is_no_prediction_and_a_broken_one_does_not_apply(source, tmp_path):
    base = source.head.commit.hexsha
    assert make_grading_tree(tmp_path / "a", source, base, "  \n", "").patch_applied is None
    wrong_base = diff(source, {"pkg/__init__.py": "VALUE = 7\n"}).replace("-VALUE = 1", "-VALUE = 3")
    broken = make_grading_tree(tmp_path / "b", source, base, wrong_base, "")
    assert broken.patch_applied is False and broken.apply_error


def test_a_test_patch_that_does_not_apply_is_bad_input(source, tmp_path):
    with pytest.raises(InputError, match="test_patch does not apply"):
        bad = diff(source, {"tests/test_pkg.py": "x\n"}).replace("-from pkg import VALUE", "-nothing like this")
        make_grading_tree(tmp_path / "t", source, source.head.commit.hexsha, diff(source, {"pkg/__init__.py": "VALUE = 2\n"}), bad)


@pytest.mark.parametrize("path, expected", [
    ("tests/test_a.py", True), ("pkg/test_b.py", True), ("pkg/b_test.py", True), ("conftest.py", True),
    ("testing/helpers.py", True), ("tox.ini", True), ("tests/data/x.txt", False), ("pkg/latest.py", False),
])
def test_what_counts_as_test_code(path, expected):
    assert is_test_code(path) is expected
