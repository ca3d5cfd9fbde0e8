"""A workspace met again after a try that was cut short: what the try left never carries over."""

from __future__ import annotations

import os

import git

from evoci.workspace import Workspace
from tests.repos import calc_repo


def test_a_fresh_workspace_after_a_committed_try_holds_the_whole_base_again(tmp_path):
    source = git.Repo(calc_repo(tmp_path / "calc"))
    base = source.commit("base").hexsha
    path = tmp_path / "task" / "workspace"
    workspace, start = Workspace.fresh(path, source, base)
    files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    (path / "src" / "calc" / "__init__.py").unlink()
    (path / "NOTES.txt").write_text("the first try's work\n")
    workspace.commit(1, "the first try")

    again, start_again = Workspace.fresh(path, source, base)
    assert start_again == start
    assert sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) == files
    assert again.repo.head.commit.hexsha == start and len(list(again.repo.iter_commits())) == 1


def test_lock_files_a_killed_git_left_are_cleared_and_git_works_again(tmp_path):
    source = git.Repo(calc_repo(tmp_path / "calc"))
    workspace, start = Workspace.fresh(tmp_path / "task" / "workspace", source, source.commit("base").hexsha)
    locks = ["index.lock", "HEAD.lock", "refs/heads/evoci.lock"]
    for lock in locks:
        (workspace.git_dir / lock).write_text("")
    assert sorted(workspace.clear_stale_locks()) == sorted(locks)
    (workspace.path / "NOTES.txt").write_text("after the crash\n")
    assert workspace.commit(1, "resumed") != start
    assert workspace.clear_stale_locks() == []


def test_changed_files_are_named_as_they_are_not_as_git_quotes_them(tmp_path):
    source = git.Repo(calc_repo(tmp_path / "calc"))
    workspace, _ = Workspace.fresh(tmp_path / "task" / "workspace", source, source.commit("base").hexsha)
    raw = os.fsencode(workspace.path)
    for name in (b"/caf\xc3\xa9 notes.py", b"/\xff.py", b"/line\nbreak.py"):
        with open(raw + name, "wb") as f:
            f.write(b"x = '\xff'\n")
    assert workspace.changed_files() == sorted(["café notes.py", os.fsdecode(b"\xff.py"), "line\nbreak.py"])
