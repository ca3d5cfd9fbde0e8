"""The grading tree: what the test node runs the tests on, built by the harness.

The agent owns its codebase, not its grade. So the tree that is graded is the agent's
*committed* source with the reference's (the oracle's) test infrastructure put back on top:

- the tests folder is the reference's, exactly (added files removed, changed files restored);
- every ``conftest.py`` is the reference's: restored where the reference has one, deleted where
  it has none (a ``conftest.py`` outside ``tests/`` is pytest code like any other);
- interpreter start-up hooks (``sitecustomize.py``, ``usercustomize.py``, ``*.pth``) and package
  metadata folders (``*.dist-info``, ``*.egg-info``, which can declare pytest plugins) exist only
  where the reference has them, as the reference has them;
- nested ``.git`` entries are dropped, and so are compiled files and modules named like the runner
  that the reference does not have (``evoci.grading.shadows``);
- ``.evoci`` (the harness's folder, where the runner configuration goes) is removed whatever the
  commit made of it and created afresh, and every symlink pointing outside the tree is removed
  (``evoci.treefs``: nothing of the agent's tree is followed or trusted to be what it looks like).

The runner's configuration is not taken from the tree at all: ``runner_config`` reads the
reference's and the test node passes it explicitly (``evoci.swe_ci.grade``); a configuration file
of the tree that says otherwise is reported as a difference.

Every path where the graded tree differs from the agent's tree is returned, so the iteration
records it (``iterations.tampered_files``).
"""

from __future__ import annotations

import configparser
import filecmp
import shutil
import tomllib
from pathlib import Path

from evoci import treefs
from evoci.agents.base import HARNESS_DIR
from evoci.grading.shadows import files_under, remove_shadows
from evoci.workspace import Workspace, extract_tree

HOOK_FILES = frozenset({"sitecustomize.py", "usercustomize.py", "conftest.py"})
HOOK_SUFFIXES = (".pth",)
METADATA_SUFFIXES = (".dist-info", ".egg-info")
_NOT_A_FILE = "[evoci: "  # how a configuration file that is a link or a special file reads
RUNNER_CONFIG = "pytest.ini"  # written under the tree's harness folder; passed with -c


def build(workspace: Workspace, sha: str, reference: Path, tests_dir: str, dest: Path,
          import_roots: tuple[str, ...] = ("src", ".")) -> list[str]:
    """Write the grading tree of commit ``sha`` to ``dest``; return the paths that differ from ``sha``'s tree."""
    treefs.clear(dest)  # folders of the last grading, at any depth (evoci.treefs)
    dest.mkdir(parents=True)
    extract_tree(workspace.repo, sha, dest)
    changed: set[str] = set(treefs.remove_named(dest, ".git"))
    changed |= set(treefs.remove_leaving_links(dest))
    if treefs.remove(dest, HARNESS_DIR):  # the harness's own folder, whatever the commit made of it
        changed.add(HARNESS_DIR)
    treefs.make_dir(dest, HARNESS_DIR)
    changed |= _replace_folder(dest / tests_dir, reference / tests_dir, dest)
    for path in _infrastructure(dest):
        twin = reference / path.relative_to(dest)
        if not _same(path, twin):
            treefs.remove(dest, _rel(path, dest))
            changed.add(_rel(path, dest))
            if twin.exists():
                _copy(twin, path)
    for twin in _infrastructure(reference):
        path = dest / twin.relative_to(reference)
        if not path.exists():
            _copy(twin, path)
            changed.add(_rel(path, dest))
    changed |= remove_shadows(dest, import_roots, files_under(reference))
    # The tree's own pytest configuration is never read (the reference's is passed with -c):
    # a different one is a difference all the same.
    mine, source = configuration(dest)
    if source and mine != runner_config(reference):
        changed.add(source)
    return sorted(changed)


def runner_config(reference: Path) -> str:
    """The reference's pytest configuration as an ini file (pytest's own order of precedence).

    An empty ``[pytest]`` section when the reference has none: with ``-c`` and ``--rootdir``
    given, pytest never looks above the tree for a configuration (a ``pyproject.toml`` of the
    project evoci's home sits in would otherwise become the rootdir and rename every test id).
    """
    return configuration(reference)[0]


def configuration(root: Path) -> tuple[str, str | None]:
    """(the pytest configuration under ``root`` as ini text, the file it came from or None).

    Read without following links: a configuration file that is a link or a special file (a FIFO
    would block the harness) is read as text that matches no reference, so it is recorded.
    """
    for name in ("pytest.ini", ".pytest.ini"):
        text = _text(root, name)
        if text is not None:
            return text, name
    text = _text(root, "pyproject.toml")
    if text is not None and text.startswith(_NOT_A_FILE):
        return text, "pyproject.toml"
    if text is not None:
        try:
            table = tomllib.loads(text).get("tool", {}).get("pytest", {})
        except tomllib.TOMLDecodeError:
            table = {}
        options = table.get("ini_options")
        if isinstance(options, dict):
            return _ini(options), "pyproject.toml"
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = configparser.ConfigParser(interpolation=None)
        text = _text(root, name) or ""
        if text.startswith(_NOT_A_FILE):
            return text, name
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_section(section):
            return _ini(dict(parser.items(section))), name
    return "[pytest]\n", None


def _text(root: Path, name: str) -> str | None:
    """The file ``name`` of ``root`` as text, None if absent; a link or special file reads as its kind."""
    try:
        return treefs.read_file(root, name).decode(errors="replace")
    except treefs.NotAFile:
        found = treefs.kind(root, name)
        return None if found in (None, "folder") else f"{_NOT_A_FILE}{name} is a {found}]\n"
    except FileNotFoundError:
        return None


def _ini(options: dict) -> str:
    lines = ["[pytest]"]
    for key, value in options.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, list):  # one item per continuation line, as ini files write lists
            text = "".join(f"\n    {item}" for item in value)
        else:
            text = str(value).strip().replace("\n", "\n    ")
        lines.append(f"{key} = {text}".rstrip())
    return "\n".join(lines) + "\n"


def _infrastructure(root: Path) -> list[Path]:
    """Start-up hooks, conftest files and package metadata under ``root`` (never inside .git)."""
    found = []
    for rel, kind in treefs.walk(root):  # any depth: an agent's folders may be nested past Python's recursion
        name = rel.rpartition("/")[2]
        if ".git" in rel.split("/"):
            continue
        if name in HOOK_FILES or name.endswith(HOOK_SUFFIXES) and kind != "folder":
            found.append(root / rel)
        elif kind in ("folder", "link") and name.endswith(METADATA_SUFFIXES):  # a link may lead to a folder
            found.append(root / rel)
    # Folders first are removed whole; their contents need no second look.
    return [p for p in sorted(found) if not any(q != p and p.is_relative_to(q) for q in found)]


def _replace_folder(target: Path, source: Path, root: Path) -> set[str]:
    real = target.is_dir() and not target.is_symlink()
    mine = {rel: kind for rel, kind in treefs.walk(target) if kind != "folder"} if real else {}
    theirs = {rel for rel, kind in treefs.walk(source) if kind != "folder"} if source.is_dir() else set()
    prefix = _rel(target, root)
    changed = {f"{prefix}/{p}" for p in mine.keys() ^ theirs}
    changed |= {f"{prefix}/{p}" for p in mine.keys() & theirs
                if mine[p] != "file" or not filecmp.cmp(target / p, source / p, shallow=False)}
    if target.is_symlink():  # a link in place of the tests folder is never followed
        changed.add(prefix)
    if changed:
        treefs.remove(root, prefix)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True)
    return changed


def _same(path: Path, twin: Path) -> bool:
    if path.is_symlink():
        return False
    if path.is_dir() or twin.is_dir():
        return path.is_dir() and twin.is_dir() and not filecmp.dircmp(path, twin).diff_files and _same_names(path, twin)
    return twin.is_file() and not path.is_symlink() and filecmp.cmp(path, twin, shallow=False)


def _same_names(a: Path, b: Path) -> bool:
    return sorted(rel for rel, _ in treefs.walk(a)) == sorted(rel for rel, _ in treefs.walk(b))


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
