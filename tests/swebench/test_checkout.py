"""The grading tree's harness-made ``.git`` (``git_checkout``): one commit of the clean base, nothing of the future."""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest

from evoci.domain import stable_hash
from evoci.swebench.checkout import MESSAGE
from evoci.swebench.specs import RepoSpec
from evoci.swebench.tree import make_base_tree, make_grading_tree, without_git_dirs
from tests.swebench.test_tree import diff, source  # noqa: F401  (fixture)

ISOLATED = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
EVIL_CONFIG = ("diff --git a/.git/config b/.git/config\nnew file mode 100644\n--- /dev/null\n+++ b/.git/config\n"
               "@@ -0,0 +1,2 @@\n+[core]\n+\tfsmonitor = /bin/false\n")


def in_tree(tree) -> git.Git:
    """git in the grading tree, as a test run would use it (the test reads; the harness never does)."""
    cmd = git.Git(tree.path)
    cmd.update_environment(**ISOLATED, GIT_CEILING_DIRECTORIES=str(tree.path.parent))
    return cmd


@pytest.fixture
def future(source):  # noqa: F811
    """The base, then a later commit (the release) with a file only the future has; (base, later, its blob)."""
    base = source.head.commit.hexsha
    (Path(source.working_dir) / "pkg" / "answer.py").write_text("ANSWER = 42\n")
    source.git.add("--all")
    source.git.commit("-m", "the release", env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                                 "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})
    later = source.head.commit
    return base, later.hexsha, later.tree["pkg/answer.py"].hexsha


def test_the_tree_is_a_checkout_of_one_commit_of_the_base_showing_the_patch_as_changes(source, future, tmp_path):  # noqa: F811
    base, later, answer_blob = future
    patch = diff(source, {"pkg/__init__.py": "VALUE = 2\n"})
    test_patch = diff(source, {"tests/test_new.py": "def test_new(): pass\n"})
    tree = make_grading_tree(tmp_path / "tree", source, base, patch, test_patch, git_checkout=True)
    assert tree.patch_applied and tree.overridden == []
    repo = in_tree(tree)
    assert repo.rev_list("--all").split() == [repo.rev_parse("HEAD")]
    assert repo.rev_parse("HEAD^{tree}") == source.commit(base).tree.hexsha
    assert repo.log("-1", "--format=%s|%an|%at") == f"{MESSAGE}|evoci|1700000000"
    assert repo.for_each_ref("--format=%(refname)") == "refs/heads/main"
    status = repo.status("--porcelain", "--untracked-files=all").splitlines()
    assert " M pkg/__init__.py" in status and "?? tests/test_new.py" in status
    for missing in (later, answer_blob):  # nothing of the release: no commit, no object
        with pytest.raises(git.GitCommandError):
            repo.cat_file("-e", missing)
    again = make_grading_tree(tmp_path / "again", source, base, patch, test_patch, git_checkout=True)
    assert in_tree(again).rev_parse("HEAD") == repo.rev_parse("HEAD")  # fixed identity and date


def test_the_proof_tree_gets_it_too_and_without_the_spec_key_there_is_none(source, tmp_path):  # noqa: F811
    base = source.head.commit.hexsha
    proof = make_base_tree(tmp_path / "proof", source, base, "", git_checkout=True)
    assert in_tree(proof).status("--porcelain") == "?? .evoci-pytest.ini"
    plain = make_grading_tree(tmp_path / "plain", source, base, diff(source, {"pkg/__init__.py": "VALUE = 2\n"}), "")
    assert not (plain.path / ".git").exists()


def test_a_git_folder_in_the_patch_is_left_out_recorded_and_the_rest_applied(source, tmp_path):  # noqa: F811
    base = source.head.commit.hexsha
    patch = EVIL_CONFIG + diff(source, {"pkg/__init__.py": "VALUE = 2\n"}) + EVIL_CONFIG.replace(".git/", "sub/.GIT/")
    kept, dropped = without_git_dirs(patch)
    assert dropped == [".git/config", "sub/.GIT/config"] and ".git" not in kept.lower()
    hidden = "diff --git a/x b/x\n+a\x0cdiff --git a/.git/c b/.git/c\n"  # a form feed in a line starts no file
    assert without_git_dirs(hidden) == (hidden, [])
    tree = make_grading_tree(tmp_path / "tree", source, base, patch, "", git_checkout=True)
    assert (tree.patch_applied, tree.overridden) == (True, [".git/config", "sub/.GIT/config"])
    assert (tree.path / "pkg" / "__init__.py").read_text() == "VALUE = 2\n"
    assert "fsmonitor" not in (tree.path / ".git" / "config").read_text()
    alone = make_grading_tree(tmp_path / "alone", source, base, EVIL_CONFIG, "")  # nothing else: the clean base
    assert (alone.patch_applied, alone.overridden) == (True, [".git/config"])
    assert not (alone.path / ".git").exists()


def test_the_spec_key_is_off_by_default_and_leaves_existing_specs_identity_alone():
    plain = RepoSpec(versions=("1.0",), python="3.9")
    assert plain.git_checkout is False
    assert plain.content_hash == stable_hash(plain.model_dump(exclude={"versions", "note", "git_checkout",
                                                                       "silent_network"}))
    checkout = RepoSpec(versions=("1.0",), python="3.9", git_checkout=True)
    silent = RepoSpec(versions=("1.0",), python="3.9", silent_network=True)
    assert len({plain.content_hash, checkout.content_hash, silent.content_hash}) == 3
    assert plain.content_hash == RepoSpec(versions=("2.0",), python="3.9", note="another").content_hash
