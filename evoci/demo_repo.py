"""Build a built-in demo's git repository from the history folders it ships with.

Every protocol's demo is built here from its own folder: SWE-CI's ``semverkit``
(``evoci.swe_ci.demo``), SWE-EVO's ``kvconf``, SWE-Bench-CL's ``strkit``.

Each folder ``history/NN_slug/`` is one commit: the files it holds (full content, at
their repository paths) are written over the previous tree, the paths listed in its
``DELETE`` file are removed, and ``COMMIT_MSG`` is the message. Author, committer and
dates are fixed, so the commit SHAs are the same on every machine.

The repository is built in a staging folder next to ``dest`` and moved into place in
one rename, so a crash never leaves half a history at ``dest``, and callers building
different destinations at once (threads or processes) never share any state.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from git import Actor, BaseIndexEntry, Blob, Repo
from gitdb import IStream

from evoci.errors import InputError

META_FILES = frozenset({"COMMIT_MSG", "DELETE"})  # in a history folder, but not repository files
AUTHOR = Actor("evoci demo", "demo@evoci.invalid")
FIRST_DATE = datetime(2024, 1, 1, tzinfo=timezone.utc)  # commit i is dated i days later
BASE_TAG, ORACLE_TAG, BRANCH = "base", "oracle", "main"

# Written into .git/ of a finished build; records what was built, so a second call reuses it.
_MARKER = "evoci-demo.json"
# Bump when the way a history becomes commits changes (dates, author, layout): old builds are redone.
_BUILD_FORMAT = 1
_FILE_MODE = 0o100644  # every demo file is a plain, non-executable file
# Git subprocesses of a build ignore the user's and the system's configuration.
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_AUTHOR_NAME": AUTHOR.name,
    "GIT_AUTHOR_EMAIL": AUTHOR.email,
    "GIT_COMMITTER_NAME": AUTHOR.name,
    "GIT_COMMITTER_EMAIL": AUTHOR.email,
}
_REPO_CONFIG = {
    ("user", "name"): AUTHOR.name,
    ("user", "email"): AUTHOR.email,
    ("commit", "gpgsign"): "false",
    ("tag", "gpgsign"): "false",
    ("core", "autocrlf"): "false",
    ("i18n", "commitencoding"): "UTF-8",
}


@dataclass(frozen=True)
class DemoRepo:
    """A built demo repository: tag ``base`` is ``commits[0]``, tag ``oracle`` is ``commits[-1]``."""

    path: Path
    base_sha: str
    oracle_sha: str
    commits: tuple[str, ...]  # from base to oracle, inclusive


@dataclass(frozen=True)
class HistoryStep:
    """One history folder: the commit it becomes."""

    name: str  # the folder name, e.g. "04_shared_grammar"
    message: str
    files: Mapping[str, bytes]  # repository path → content, with LF line endings
    deletions: tuple[str, ...]


def load_history(root: Path) -> tuple[HistoryStep, ...]:
    """The history folders under ``root``, in commit order."""
    folders = sorted(p for p in root.iterdir() if p.is_dir() and p.name[:2].isdigit())
    if not folders:
        raise FileNotFoundError(f"no history folders (NN_slug/) in {root} — is evoci installed with its package data?")
    return tuple(_load_step(folder) for folder in folders)


def history_fingerprint(history: tuple[HistoryStep, ...]) -> str:
    """Identity of what a build produces: changes when any file, message or the build format does."""
    digest = hashlib.sha256(f"evoci-demo/{_BUILD_FORMAT}".encode())
    for step in history:
        digest.update(json.dumps([step.name, step.message, sorted(step.deletions)]).encode())
        for path in sorted(step.files):
            digest.update(path.encode() + b"\0" + hashlib.sha256(step.files[path]).digest())
    return digest.hexdigest()


def build_demo_repo(dest: Path, history_dir: Path) -> DemoRepo:
    """Build the demo repository at ``dest``, or reuse it if ``dest`` already holds this history.

    ``history_dir`` holds the ``NN_slug/`` folders (each protocol's demo ships its own).

    ``dest`` must be missing, empty, or a demo repository built earlier (an outdated one is
    replaced). Anything else raises InputError rather than being overwritten.
    """
    dest = Path(dest).absolute()
    history = load_history(history_dir)
    fingerprint = history_fingerprint(history)
    existing = _read_marker(dest)
    if existing is not None and existing.get("fingerprint") == fingerprint:
        return _reuse(dest, existing)
    if existing is None and dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise InputError(
            f"{dest} exists and is not an evoci demo repository — remove it or choose another folder"
        )
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.building-", dir=dest.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would hide the repository from a sandbox's other users
    try:
        commits = _write_repository(staging, history)
        _write_marker(staging, fingerprint, commits)
        if not _move_into_place(staging, dest, fingerprint):
            # Someone else built the same destination meanwhile; use theirs if it is this history.
            raced = _read_marker(dest)
            if raced is None or raced.get("fingerprint") != fingerprint:
                raise InputError(f"{dest} changed while the demo repository was being built — try again")
            return _reuse(dest, raced)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return DemoRepo(dest, commits[0], commits[-1], commits)


# -- reading the history ----------------------------------------------------------------


def _load_step(folder: Path) -> HistoryStep:
    message_file = folder / "COMMIT_MSG"
    if not message_file.is_file():
        raise FileNotFoundError(f"history folder {folder.name} has no COMMIT_MSG")
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or _is_generated(relative) or relative.as_posix() in META_FILES:
            continue
        files[relative.as_posix()] = path.read_bytes().replace(b"\r\n", b"\n")
    delete_file = folder / "DELETE"
    lines = delete_file.read_text().splitlines() if delete_file.is_file() else []
    deletions = [line.strip() for line in lines if line.strip()]
    message = message_file.read_text().replace("\r\n", "\n").strip() + "\n"
    return HistoryStep(folder.name, message, files, tuple(deletions))


def _is_generated(relative: Path) -> bool:
    """Files that running Python or pytest over a history folder may leave behind."""
    return "__pycache__" in relative.parts or ".pytest_cache" in relative.parts or relative.suffix == ".pyc"


# -- writing the repository -------------------------------------------------------------


def _write_repository(root: Path, history: tuple[HistoryStep, ...]) -> tuple[str, ...]:
    """One commit per history step in a new repository at ``root``; returns their SHAs."""
    repo = Repo.init(root, env=_GIT_ENV)
    try:
        repo.git.update_environment(**_GIT_ENV)
        with repo.config_writer() as config:
            for (section, option), value in _REPO_CONFIG.items():
                config.set_value(section, option, value)
        repo.git.symbolic_ref("HEAD", f"refs/heads/{BRANCH}")
        shas = []
        for number, step in enumerate(history):
            shas.append(_commit(repo, root, step, FIRST_DATE + timedelta(days=number)))
        repo.create_tag(BASE_TAG, ref=shas[0])
        repo.create_tag(ORACLE_TAG, ref=shas[-1])
        repo.git.update_index("-q", "--refresh")  # record file stats, so `git status` is clean
        return tuple(shas)
    finally:
        repo.close()


def _commit(repo: Repo, root: Path, step: HistoryStep, when: datetime) -> str:
    entries = []
    for path, content in step.files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        # Stored as blobs directly: adding paths would make gitpython chdir, which threads share.
        blob = repo.odb.store(IStream(Blob.type, len(content), io.BytesIO(content)))
        entries.append(BaseIndexEntry((_FILE_MODE, blob.binsha, 0, path)))
    if entries:
        repo.index.add(entries)
    if step.deletions:
        repo.index.remove(list(step.deletions), working_tree=True)
    # gitpython writes the commit object itself from these arguments; the same dates go into
    # the environment of any git subprocess, so nothing falls back to the current time.
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S+0000")
    with repo.git.custom_environment(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp):
        commit = repo.index.commit(
            step.message, author=AUTHOR, committer=AUTHOR, author_date=when, commit_date=when, skip_hooks=True
        )
    return commit.hexsha


def _move_into_place(staging: Path, dest: Path, fingerprint: str) -> bool:
    """Rename ``staging`` to ``dest``, replacing an empty folder or an outdated demo build.

    False when ``dest`` changed meanwhile: another builder finished first, or put files there.
    """
    current = _read_marker(dest)
    if current is not None and current.get("fingerprint") == fingerprint:
        return False
    retired = None
    if current is not None:
        retired = Path(tempfile.mkdtemp(prefix=f".{dest.name}.outdated-", dir=dest.parent))
        os.replace(dest, retired / "repo")
    elif dest.is_dir() and not any(dest.iterdir()):
        try:
            dest.rmdir()
        except OSError:
            return False
    try:
        os.rename(staging, dest)
    except OSError:
        return False
    finally:
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
    return True


# -- the marker -------------------------------------------------------------------------


def _write_marker(root: Path, fingerprint: str, commits: tuple[str, ...]) -> None:
    marker = {"fingerprint": fingerprint, "commits": list(commits)}
    (root / ".git" / _MARKER).write_text(json.dumps(marker, indent=2) + "\n")


def _read_marker(dest: Path) -> dict | None:
    try:
        return json.loads((dest / ".git" / _MARKER).read_text())
    except (OSError, ValueError):
        return None


def _reuse(dest: Path, marker: dict) -> DemoRepo:
    """The DemoRepo recorded at ``dest``, after checking that its tags still point where recorded."""
    commits = tuple(marker["commits"])
    repo = Repo(dest)
    try:
        tags = {tag.name: tag.commit.hexsha for tag in repo.tags}
    finally:
        repo.close()
    if tags.get(BASE_TAG) != commits[0] or tags.get(ORACLE_TAG) != commits[-1]:
        raise InputError(
            f"{dest} holds the demo repository but its '{BASE_TAG}'/'{ORACLE_TAG}' tags were moved — "
            "remove the folder to rebuild it"
        )
    return DemoRepo(dest, commits[0], commits[-1], commits)
