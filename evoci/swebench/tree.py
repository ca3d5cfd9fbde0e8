"""The grading tree: the clean base, the agent's patch, and the record's tests — nothing else of the agent's.

Built on the host by the harness (applying a patch runs no code). The agent controls its
source files, never its grade, so ``make_grading_tree``:

1. checks out the clean base into a fresh repository (no history);
2. applies the agent's patch (``git apply``, then once more with reduced context);
3. puts back every test file the patch touched — files the ``test_patch`` touches, Python
   test code (``test_*.py``, ``*_test.py``, ``conftest.py``, ``.py`` under a test folder)
   and pytest's own configuration files — as they are in the base (a file the agent
   added there is removed); non-Python test data the patch changed stays (a release may
   change it, and the record's gold patch then does);
4. applies the ``test_patch``;
5. removes every start-up hook the clean base + ``test_patch`` tree does not have:
   ``conftest.py``, ``sitecustomize.py``, ``usercustomize.py``, ``*.pth`` files and
   ``*.dist-info`` / ``*.egg-info`` folders.

Every path of the agent's work that grading overrode or removed is returned, so it is recorded.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import git

from evoci.errors import InputError
from evoci.workspace import Workspace

HOOK_FILES = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py"})
HOOK_SUFFIXES = (".pth",)
HOOK_DIR_SUFFIXES = (".dist-info", ".egg-info")
RUNNER_CONFIG = frozenset({"pytest.ini", ".pytest.ini", "tox.ini"})
TEST_DIRS = frozenset({"test", "tests", "testing"})
_DIFF_PATH = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


@dataclass
class GradingTree:
    """A grading tree ready to test, and what of the agent's work it overrode."""

    path: Path
    patch_applied: bool | None  # None: no patch was given (no prediction)
    apply_method: str | None = None
    apply_error: str = ""
    overridden: list[str] = field(default_factory=list)


def patch_paths(patch: str) -> set[str]:
    """Every path a git-format patch touches (both sides of a rename)."""
    return {p for pair in _DIFF_PATH.findall(patch or "") for p in pair}


def is_test_code(path: str) -> bool:
    """Python test code or pytest configuration: what an agent may never change for grading."""
    p = PurePosixPath(path)
    if p.name in RUNNER_CONFIG or p.name == "conftest.py":
        return True
    if p.suffix != ".py":
        return False
    return p.name.startswith("test_") or p.stem.endswith("_test") or any(part in TEST_DIRS for part in p.parts[:-1])


def is_empty_patch(patch: str | None) -> bool:
    return patch is None or not patch.strip()


def make_grading_tree(path: Path, source: git.Repo, base_sha: str, patch: str | None, test_patch: str) -> GradingTree:
    """Build the grading tree at ``path`` (replacing what is there); see the module docstring."""
    shutil.rmtree(path, ignore_errors=True)
    workspace, _ = Workspace.create(path, source, base_sha, base_sha, "tests")
    repo = workspace.repo
    if is_empty_patch(patch):
        tree = GradingTree(path, patch_applied=None)
    else:
        method, error = _apply(repo, patch, ("git apply", []), ("git apply -C1", ["-C1", "--recount"]))
        tree = GradingTree(path, patch_applied=method is not None, apply_method=method, apply_error=error)
        if method is None:
            return tree
    tree.overridden = restore_tests_and_remove_hooks(workspace, test_patch)
    return tree


def restore_tests_and_remove_hooks(workspace: Workspace, test_patch: str) -> list[str]:
    """Steps 3–5 of the module docstring on a work tree whose HEAD is the clean base.

    The one place the grading-tree hygiene lives, so a shared implementation can replace it.
    Returns the agent's paths that grading overrode or removed, sorted.
    """
    repo = workspace.repo
    test_paths = patch_paths(test_patch)
    overridden = set()
    for changed in workspace.changed_files():
        if changed in test_paths or is_test_code(changed):
            _restore(repo, workspace.path, changed)
            overridden.add(changed)
    reference = set(repo.git.ls_files().splitlines()) | test_paths
    if test_patch.strip():
        method, error = _apply(repo, test_patch, ("git apply", []))
        if method is None:
            raise InputError(f"the record's test_patch does not apply to its base commit ({error.strip()[:300]}) "
                             "— fix the record's base_commit or test_patch")
    overridden |= _remove_hooks(workspace.path, reference)
    return sorted(overridden)


def _restore(repo: git.Repo, root: Path, path: str) -> None:
    """``path`` as in HEAD (the clean base), or gone if HEAD does not have it."""
    target = root / path
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    elif target.exists() or target.is_symlink():
        target.unlink()
    if repo.git.ls_files("--", path):
        repo.git.checkout("HEAD", "--", path)


def _remove_hooks(root: Path, reference: set[str]) -> set[str]:
    """Delete start-up hooks and installed-package metadata that the reference tree lacks."""
    removed = set()
    for item in sorted(root.rglob("*")):
        rel = item.relative_to(root).as_posix()
        if rel.startswith((".git/", ".evoci/")) or not item.exists():
            continue
        if item.is_dir() and item.name.endswith(HOOK_DIR_SUFFIXES):
            if not any(p.startswith(rel + "/") for p in reference):
                shutil.rmtree(item)
                removed.add(rel + "/")
        elif (item.name in HOOK_FILES or item.name.endswith(HOOK_SUFFIXES)) and rel not in reference:
            item.unlink()
            removed.add(rel)
    return removed


def _apply(repo: git.Repo, patch: str, *attempts: tuple[str, list[str]]) -> tuple[str | None, str]:
    """Apply ``patch`` with the first attempt that works: (its name, "") or (None, the last error)."""
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False) as f:
        f.write(patch if patch.endswith("\n") else patch + "\n")
    error = ""
    try:
        for name, options in attempts:
            try:
                repo.git.apply("--whitespace=nowarn", *options, f.name)
                return name, ""
            except git.GitCommandError as exc:
                error = str(exc.stderr or exc)
        return None, error
    finally:
        Path(f.name).unlink(missing_ok=True)
