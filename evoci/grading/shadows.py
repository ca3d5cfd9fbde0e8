"""Nothing on a grading tree's import path may look like the runner, in any form.

A module in the tree named like pytest, its core, pluggy, the report plugin or one of their
dependencies would be imported instead of the environment's by any ``import`` the runner makes
after the tree joins ``sys.path`` (pytest imports some lazily). A source scan sees a ``.py`` file
but not a compiled one: a ``.pyc`` in place, a ``__pycache__`` entry, an extension module
(``.so``) or a folder. So every grading tree drops, before anything runs:

- every compiled file or ``__pycache__`` folder the reference tree does not have;
- every module, package or compiled module named like the runner on one of the tree's import
  roots (its top folder and the task's ``pythonpath`` entries) that the reference does not have.

Each removed path is returned, so the iteration records it as tampering.
"""

from __future__ import annotations

from pathlib import Path

from evoci import treefs

# The runner, its plugins evoci loads and what they import (pytest 7–9, pytest-json-report).
RUNNER_MODULES = frozenset({
    "pytest", "_pytest", "py", "pluggy", "pytest_jsonreport", "pytest_metadata", "iniconfig", "packaging",
    "exceptiongroup", "tomli", "colorama", "pygments", "xdist", "execnet",
})
COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")
_SKIPPED = frozenset({".git", ".evoci"})


def remove_shadows(root: Path, import_roots: list[str] | tuple[str, ...], reference: set[str]) -> set[str]:
    """Delete compiled files and runner look-alikes under ``root`` that ``reference`` (relative paths) lacks."""
    removed: set[str] = set()
    for rel, kind in treefs.walk(root):  # any depth; a folder removed here is not entered
        if _SKIPPED & set(rel.split("/")):
            continue
        if (_compiled(rel) or _runner_like(rel, import_roots)) and not _known(rel, reference):
            treefs.remove(root, rel)
            removed.add(rel + "/" if kind == "folder" else rel)
    return removed


def files_under(root: Path) -> set[str]:
    """Every relative path under ``root`` (the reference side of ``remove_shadows``)."""
    return {rel for rel, _ in treefs.walk(root)} if root.is_dir() else set()


def _compiled(rel: str) -> bool:
    name = rel.rpartition("/")[2]
    return name == "__pycache__" or name.endswith(COMPILED_SUFFIXES)


def _runner_like(rel: str, import_roots: list[str] | tuple[str, ...]) -> bool:
    """Whether ``rel`` is a top-level module on one of the import roots, named like the runner."""
    parts = rel.split("/")
    for entry in (".", *import_roots):
        prefix = [p for p in entry.strip("/").split("/") if p and p != "."]
        if len(parts) == len(prefix) + 1 and parts[: len(prefix)] == prefix:
            return parts[-1].split(".")[0] in RUNNER_MODULES
    return False


def _known(rel: str, reference: set[str]) -> bool:
    return rel in reference or any(r.startswith(rel + "/") for r in reference)
