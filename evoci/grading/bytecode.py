"""Test modules rewritten once, where no code of the tree has run, and kept for the next grading tree.

Every grading tree is new and runs with ``-B``, so pytest rewrote the assertions of every test
module on every run: about a tenth of a second of the demo's half-second test run, most of what the
test node cost beyond a bare ``pytest`` that keeps its ``__pycache__`` (``benchmarks/loop_overhead.py``).
Bytecode kept from a grading run is bytecode the tested code could have written, so none is taken
from a tree. Instead:

1. ``prepare`` lists the tree's test modules that are the reference's (pytest's ``python_files``
   patterns under the folders the caller names, SWE-CI's tests folder, and every ``conftest.py``:
   never a module the agent added, whose new content every iteration would only grow the store),
   hashes each as the harness built it, and puts the bytecode this store keeps for that content in
   the tree's ``__pycache__`` (written afresh, no link followed); the modules it keeps none for are
   listed for the launcher.
2. The launcher's test process rewrites the listed modules with the environment's pytest *before
   any code of the tree can run* and sends them to its collector through a pipe it closes before
   the tree is put on the import path (``evoci.grading.launcher``); they arrive in the frame's
   bytecode section, which nothing the tests run can write to.
3. ``keep`` stores each under the hash the harness computed before the run, the module's path, the
   environment and the tree's path as the sandbox shows them, and pytest's own cache name
   (interpreter and pytest version), in the home — a folder no sandbox mounts.

Keeping bytecode only saves time: nothing here raises for what a tree holds or for the store's
disk (a name too long, a name that is not UTF-8, a full disk, another task keeping the same
module at the same moment): that module is simply rewritten by pytest as before.

pytest checks the source hash in the header of what it finds (and falls back to rewriting when it
does not match); the store adds its own check, the content hash, so a module is never given code
made from other source. A runner configuration that turns on ``enable_assertion_pass_hook`` (which
changes the rewriting) keeps nothing.
"""

from __future__ import annotations

import base64
import configparser
import fnmatch
import hashlib
import os
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from evoci import treefs

LIST_FILE = ".evoci/rewrite-ahead"  # in the grading tree; read by the launcher before the tree runs
DEFAULT_PATTERNS = ("test_*.py", "*_test.py")  # pytest's default python_files
MAX_LISTED = 5000  # test modules one run rewrites ahead, at most
MAX_KEPT = 4 * 1024 * 1024  # bytes of one module's bytecode kept, at most
_NAME_MAX = 255  # bytes of one file name
_FAILED = (OSError, UnicodeError, ValueError)  # what keeping may meet; never the run's failure
_SKIPPED = frozenset({".git", "__pycache__", ".evoci"})
# pytest's cache name after the module's stem: ".cpython-311-pytest-9.2.0.pyc"
_TAIL = re.compile(r"\.[A-Za-z0-9_.-]+-pytest-[A-Za-z0-9_.+-]+\.pyc\Z")
_HEADER = 16  # magic, flags, and a source hash or a modification time and size


@dataclass
class Listed:
    """What ``prepare`` found in one grading tree."""

    where: str  # the environment and the tree's path as the sandbox shows it: part of the key
    hashes: dict[str, str] = field(default_factory=dict)  # path → sha256 of the module the harness built
    missing: list[str] = field(default_factory=list)  # paths with no bytecode kept yet: the launcher rewrites them


class BytecodeStore:
    """Rewritten test modules under ``folder`` (the home's ``bytecode``), keyed by content."""

    def __init__(self, folder: Path):
        self.folder = folder

    def prepare(self, tree: Path, where: str, runner_config: str | None, tests: tuple[str, ...],
                arguments: tuple[str, ...] = ()) -> Listed | None:
        """List ``tree``'s reference test modules (under ``tests``, and every conftest) and put their kept
        bytecode in place; None when nothing may be kept. ``where``: the environment and the tree's
        path in the sandbox."""
        options = _options(runner_config or "")
        if options.get("enable_assertion_pass_hook", "").strip().lower() in ("1", "true", "yes", "on") \
                or any("enable_assertion_pass_hook" in a for a in arguments):
            return None
        patterns = tuple(shlex.split(options.get("python_files", ""))) or DEFAULT_PATTERNS
        folders = tuple(f"{t.strip('/')}/" for t in tests if t.strip("/"))
        listed = Listed(where=where)
        for rel, kind in treefs.walk(tree):
            if len(listed.hashes) >= MAX_LISTED:
                break
            name = rel.rpartition("/")[2]
            if kind != "file" or "\n" in rel or "\t" in rel or _SKIPPED.intersection(rel.split("/")) or not (
                    name == "conftest.py" or (rel.startswith(folders) and _is_test_module(name, patterns))):
                continue
            try:
                self._prepare_one(tree, rel, listed)
            except _FAILED:  # this module is rewritten by pytest, as without a store
                listed.hashes.pop(rel, None)
        return listed

    def _prepare_one(self, tree: Path, rel: str, listed: Listed) -> None:
        rel.encode("utf-8")  # a name the list cannot carry (not UTF-8) is not listed: UnicodeError
        digest = hashlib.sha256(treefs.read_file(tree, rel)).hexdigest()
        listed.hashes[rel] = digest
        entry = self._entry(listed.where, rel, digest)
        folder, _, name = rel.rpartition("/")
        stem = name[:-3]
        placed = False
        for tail in sorted(p.name for p in entry.iterdir()) if entry.is_dir() else ():
            if not _TAIL.match(tail) or len(stem.encode()) + len(tail.encode()) > _NAME_MAX:
                continue
            try:
                data = (entry / tail).read_bytes()
            except FileNotFoundError:  # another task is replacing it this moment
                continue
            treefs.write_file(tree, f"{folder}/__pycache__/{stem}{tail}".lstrip("/"), data)
            _match_timestamp(tree, rel, data)
            placed = True
        if not placed:
            listed.missing.append(rel)

    def keep(self, listed: Listed, section: bytes) -> int:
        """Store the launcher's rewritten modules of ``section`` (a frame's bytecode); return how many.

        Only modules the harness listed, under the hash it computed before the run; anything else in
        the section, or a section that does not parse, keeps nothing more.
        """
        try:
            return self._keep(listed, section)
        except _FAILED:  # a full disk, an unwritable home: the next run rewrites again
            return 0

    def _keep(self, listed: Listed, section: bytes) -> int:
        kept, at = 0, 0
        wanted = set(listed.missing)
        while at < len(section):
            end = section.find(b"\n", at)
            if end < 0:
                break
            try:
                rel, name, size_text = section[at:end].decode("utf-8", "surrogateescape").split("\t")
                size = int(size_text)
            except ValueError:
                break
            encoded, at = section[end + 1:end + 1 + size], end + 1 + size
            try:
                data = base64.b64decode(encoded, validate=True)
            except ValueError:
                break
            stem = rel.rpartition("/")[2][:-3]
            tail = name[len(stem):]
            if rel not in wanted or not name.startswith(stem) or not _TAIL.match(tail) or len(encoded) != size \
                    or not _HEADER < len(data) <= MAX_KEPT:
                continue
            wanted.discard(rel)
            self._store(self._entry(listed.where, rel, listed.hashes[rel]) / tail, data)
            kept += 1
        return kept

    def _entry(self, where: str, rel: str, digest: str) -> Path:
        # The module's path is in the key too: an older pytest keeps the file name it was made at.
        place = hashlib.sha256(f"{where}\0{rel}".encode("utf-8", "surrogateescape")).hexdigest()[:24]
        return self.folder / digest[:2] / f"{digest}-{place}"

    def _store(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        spool = self.folder / "tmp"  # never inside an entry, where prepare would take it for bytecode
        spool.mkdir(exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=spool, prefix="keeping-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(temporary, path)  # two tasks keeping the same module write the same bytes


def _options(config: str) -> dict[str, str]:
    """The ``[pytest]`` section of the harness's runner configuration (``evoci.grading.tree.runner_config``)."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(config)
    except configparser.Error:
        return {"enable_assertion_pass_hook": "true"}  # unreadable: keep nothing rather than guess
    return dict(parser["pytest"]) if parser.has_section("pytest") else {}


def _is_test_module(name: str, patterns: tuple[str, ...]) -> bool:
    return name.endswith(".py") and (name == "conftest.py" or any(fnmatch.fnmatch(name, p) for p in patterns))


def _match_timestamp(tree: Path, rel: str, data: bytes) -> None:
    """A pytest that validates by modification time and size (flags 0) finds the module it was made from.

    The content is the same (the store's key is its hash), so the harness gives the tree's file the
    time recorded in the header. Hash-checked bytecode (flags 3, the current pytest) needs nothing.
    """
    if data[4:8] != b"\x00\x00\x00\x00":
        return
    mtime = int.from_bytes(data[8:12], "little")
    try:
        # A real file found by treefs.walk, whose folders are real: no agent process runs meanwhile.
        os.utime(tree / rel, (mtime, mtime), follow_symlinks=False)
    except OSError:
        pass
