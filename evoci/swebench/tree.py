"""The grading tree: the clean base, the agent's patch, and the record's tests — nothing else of the agent's.

Built on the host by the harness (applying a patch runs no code). The agent controls its
source files, never its grade, so ``make_grading_tree``:

1. unpacks the clean base into a fresh folder (no history);
2. applies the agent's patch (``git apply``, then once more with reduced context);
3. puts back every test file the patch touched — files the ``test_patch`` touches, Python
   test code (``test_*.py``, ``*_test.py``, ``conftest.py``, ``.py`` under a test folder)
   and pytest's own configuration files — as they are in the base (a file the agent
   added there is removed); non-Python test data the patch changed stays (a release may
   change it, and the record's gold patch then does);
4. applies the ``test_patch``;
5. removes every start-up hook the clean base + ``test_patch`` tree does not have:
   ``conftest.py``, ``sitecustomize.py``, ``usercustomize.py``, ``*.pth`` files and
   ``*.dist-info`` / ``*.egg-info`` folders, and every compiled file or module named like the
   runner (``evoci.grading.shadows``);
6. removes, whatever they are, the names the harness owns (``.evoci``, ``RUNNER_CONFIG_FILE``)
   and every symlink of the patch that points outside the tree or stands where the base or
   the ``test_patch`` has a folder, and writes its own files afresh without following a link
   (``evoci.treefs``); each is recorded;
7. writes the clean base + ``test_patch``'s pytest configuration to ``RUNNER_CONFIG_FILE``,
   which the grader passes with ``-c``: pytest settings the agent wrote into ``pyproject.toml``
   or ``setup.cfg`` (files it may otherwise change: they hold its package's metadata), such as
   ``addopts = -p its_plugin``, are never read. A tree whose own configuration differs records
   that file as overridden.

8. for a spec with ``git_checkout``, gives the tree a harness-made ``.git`` holding one commit of
   the clean base (``checkout``), last, so ``git status`` shows the patch and the ``test_patch``
   as changes, as in the SWE-bench images; no git command of the harness reads the tree for it.

A patch's files under a ``.git`` (any depth, any case) are left out before step 2 and recorded:
``git apply`` refuses a whole patch for one of them, and the tree's ``.git`` is the harness's.
Every path of the agent's work that grading overrode or removed is returned, so it is recorded.
Steps 3–6 never follow a link of the agent's tree.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import git

from evoci import treefs
from evoci.agents.base import HARNESS_DIR
from evoci.errors import InputError
from evoci.grading import diffpaths
from evoci.grading.shadows import remove_shadows
from evoci.grading.tree import configuration, runner_config
from evoci.swebench.checkout import GIT_DIR, add_base_repository

HOOK_FILES = frozenset({"conftest.py", "sitecustomize.py", "usercustomize.py"})
HOOK_SUFFIXES = (".pth",)
HOOK_DIR_SUFFIXES = (".dist-info", ".egg-info")
RUNNER_CONFIG = frozenset({"pytest.ini", ".pytest.ini", "tox.ini"})
TEST_DIRS = frozenset({"test", "tests", "testing"})
# Where pytest reads its configuration (evoci.grading.tree.configuration's order); at the root only.
CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# At the tree's root, so ini-relative settings (pythonpath, testpaths) mean what they meant.
RUNNER_CONFIG_FILE = ".evoci-pytest.ini"
_FILE_START = re.compile(r"^(?=diff --git )", re.MULTILINE)


@dataclass
class GradingTree:
    """A grading tree ready to test, and what of the agent's work it overrode."""

    path: Path
    patch_applied: bool | None  # None: no patch was given (no prediction)
    apply_method: str | None = None
    apply_error: str = ""
    overridden: list[str] = field(default_factory=list)


def patch_paths(patch: str) -> set[str]:
    """Every path a git-format patch touches (both sides of a rename; quoted names unquoted)."""
    return {p for entry in diffpaths.files(patch or "") for p in entry.paths}


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


def make_grading_tree(path: Path, source: git.Repo, base_sha: str, patch: str | None, test_patch: str,
                      import_roots: tuple[str, ...] = ("src", "."), git_checkout: bool = False) -> GradingTree:
    """Build the grading tree at ``path`` (replacing what is there); see the module docstring.

    The tree is a plain folder, a repository only with ``git_checkout``: git unpacks the base and
    applies patches (few processes: grading time stays close to the test command's own).
    """
    _unpack_base(path, source, base_sha)
    if is_empty_patch(patch):
        return GradingTree(path, patch_applied=None)
    patch, in_git_dir = without_git_dirs(patch)
    if in_git_dir and not patch_paths(patch):  # nothing but files under a .git: the clean base is graded
        method, error = "git apply", ""
    else:
        method, error = _apply(path, patch, ("git apply", []), ("git apply -C1", ["-C1", "--recount"]))
    tree = GradingTree(path, patch_applied=method is not None, apply_method=method, apply_error=error)
    if method is not None:
        tree.overridden = restore_tests_and_remove_hooks(path, source, base_sha, patch_paths(patch), test_patch,
                                                       import_roots)
        clean = clean_runner_config(source, base_sha, test_patch)
        mine, found_in = configuration(path)
        if found_in and mine != clean:
            tree.overridden = sorted({*tree.overridden, found_in})
        # Harness-owned names: whatever the patch put there (a link to a host file) is gone first.
        tree.overridden = sorted({*tree.overridden, *in_git_dir, *treefs.write_file(path, RUNNER_CONFIG_FILE, clean),
                                  *treefs.make_dir(path, HARNESS_DIR),
                                  *(add_base_repository(path, source, base_sha) if git_checkout else ())})
    return tree


def make_base_tree(path: Path, source: git.Repo, base_sha: str, test_patch: str,
                   git_checkout: bool = False) -> GradingTree:
    """The clean base with the ``test_patch``: what proves an environment before any agent is graded in it."""
    _unpack_base(path, source, base_sha)
    restore_tests_and_remove_hooks(path, source, base_sha, set(), test_patch)
    (path / RUNNER_CONFIG_FILE).write_text(clean_runner_config(source, base_sha, test_patch))
    if git_checkout:
        add_base_repository(path, source, base_sha)
    return GradingTree(path, patch_applied=True, apply_method="base")


def without_git_dirs(patch: str) -> tuple[str, list[str]]:
    """``patch`` without its files under (or at) a ``.git``, and their paths.

    git refuses such a path in any case (``.GIT/config`` too), and with it the whole patch; left
    out, the rest of the patch is graded as if the agent had not written them.
    """
    # One section a file: a hunk's lines start with " ", "+", "-" or "\\", never "diff --git " (split at "\n"
    # alone: a form feed inside a line is no line start).
    preamble, *sections = _FILE_START.split(patch)
    kept, dropped = [preamble], set()
    for section in sections:
        paths = diffpaths.files(section)[0].paths  # its own header's (a form feed in a line reads as a break)
        if any(part.casefold() == GIT_DIR for p in paths for part in p.split("/")):
            dropped |= paths
        else:
            kept.append(section)
    return "".join(kept), sorted(dropped)


def _unpack_base(path: Path, source: git.Repo, base_sha: str) -> None:
    """A fresh folder at ``path`` holding the base's files (no history)."""
    treefs.clear(path)  # the last grading's tree, whatever depth a patch gave its folders
    path.mkdir(parents=True)
    buf = io.BytesIO()
    source.archive(buf, base_sha, format="tar")
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        tar.extractall(path, filter="tar")


def clean_runner_config(source: git.Repo, base_sha: str, test_patch: str) -> str:
    """The pytest configuration of the clean base with the ``test_patch`` applied, as ini text."""
    base = source.commit(base_sha).tree
    touched = sorted(patch_paths(test_patch) & set(CONFIG_FILES))
    with tempfile.TemporaryDirectory(prefix="evoci-config-") as folder:
        root = Path(folder) / "tree"
        root.mkdir()
        for name in CONFIG_FILES:
            try:
                (root / name).write_bytes(base[name].data_stream.read())
            except KeyError:
                continue
        if touched:
            method, error = _apply(root, test_patch, ("git apply", [f"--include={name}" for name in touched]))
            if method is None:
                raise InputError(f"the record's test_patch does not apply to its base commit's {', '.join(touched)} "
                                 f"({error.strip()[:300]}) — fix the record's base_commit or test_patch")
        return runner_config(root)


def restore_tests_and_remove_hooks(root: Path, source: git.Repo, base_sha: str, changed: set[str],
                                   test_patch: str, import_roots: tuple[str, ...] = ("src", ".")) -> list[str]:
    """Steps 3–5 of the module docstring on ``root``: the base with the agent's ``changed`` paths.

    The one place the grading-tree hygiene lives, so a shared implementation can replace it.
    Returns the agent's paths that grading overrode or removed, sorted.
    """
    base = source.commit(base_sha).tree
    test_paths = patch_paths(test_patch)
    reference = set(source.git.ls_tree("-r", "--name-only", base_sha).splitlines()) | test_paths
    overridden = _remove_links_and_harness_names(root, changed, reference)
    for changed_path in sorted(changed):
        if changed_path in test_paths or is_test_code(changed_path):
            overridden |= {*_restore(base, root, changed_path), changed_path}
    if test_patch.strip():
        method, error = _apply(root, test_patch, ("git apply", []))
        if method is None:
            raise InputError(f"the record's test_patch does not apply to its base commit ({error.strip()[:300]}) "
                             "— fix the record's base_commit or test_patch")
    overridden |= _remove_hooks(root, reference)
    overridden |= remove_shadows(root, import_roots, reference)  # compiled files and runner look-alikes
    return sorted(overridden)


def _remove_links_and_harness_names(root: Path, changed: set[str], reference: set[str]) -> set[str]:
    """Remove the harness's own names whatever they are, and every link of the agent's ``changed`` paths that
    points outside the tree or stands where the ``reference`` has a folder (a test folder made a link)."""
    removed = set()
    for name in (HARNESS_DIR, RUNNER_CONFIG_FILE):
        if treefs.remove(root, name):
            removed.add(name)
    for path in sorted(changed):
        if treefs.kind(root, path) != "link":
            continue
        if treefs.link_leaves(root, path) or any(p.startswith(path + "/") for p in reference):
            treefs.remove(root, path)
            removed.add(path)
    return removed


def _restore(base: git.Tree, root: Path, path: str) -> list[str]:
    """``path`` as in the base, or gone if the base does not have it; return what stood in the way (links)."""
    treefs.remove(root, path)
    try:
        blob = base[path]
    except KeyError:
        return []
    if blob.mode == 0o120000:  # a symlink in the base stays one
        return treefs.write_link(root, path, blob.data_stream.read().decode())
    return treefs.write_file(root, path, blob.data_stream.read(), 0o755 if blob.mode & 0o111 else 0o644)


def _remove_hooks(root: Path, reference: set[str]) -> set[str]:
    """Delete start-up hooks and installed-package metadata that the reference tree lacks (links included)."""
    removed = set()
    for rel, kind in treefs.walk(root):  # any depth, never through a link; a folder removed is not entered
        name = rel.rpartition("/")[2]
        folder = name.endswith(HOOK_DIR_SUFFIXES) and kind in ("folder", "link")
        if folder and not any(p.startswith(rel + "/") for p in reference):
            treefs.remove(root, rel)
            removed.add(rel + "/")
        elif not folder and (name in HOOK_FILES or name.endswith(HOOK_SUFFIXES)) and rel not in reference:
            treefs.remove(root, rel)
            removed.add(rel)
    return removed


def _apply(root: Path, patch: str, *attempts: tuple[str, list[str]]) -> tuple[str | None, str]:
    """Apply ``patch`` in ``root`` with the first attempt that works: (its name, "") or (None, the last error).

    ``root`` is no repository; git must not find one above it either (its paths would be read
    relative to that repository), hence the ceiling.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False) as f:
        f.write(patch if patch.endswith("\n") else patch + "\n")
    runner = git.Git(root)
    env = {"GIT_CEILING_DIRECTORIES": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    error = ""
    try:
        for name, options in attempts:
            try:
                runner.apply("--whitespace=nowarn", *options, f.name, env=env)
                return name, ""
            except git.GitCommandError as exc:
                error = str(exc.stderr or exc)
        return None, error
    finally:
        Path(f.name).unlink(missing_ok=True)
