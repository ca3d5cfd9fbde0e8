"""Per-run workspace repositories: one commit per iteration, nothing of the oracle's code.

The workspace is a fresh git repository (not a clone), so an agent that looks into
``.git`` finds no future history. Iteration 0 is the base's tree with the oracle's
tests folder in place of the base's; iteration i is committed on top of i − 1. Commits
use a fixed identity and dates derived from the iteration, so the same tree always gets
the same SHA: re-running a deterministic agent reproduces SHAs, and SHAs are what the
Prefect cache keys on.

The oracle's own tree is checked out separately (``oracle/``), for the harness only.

**Git out of reach.** The repository's git folder is *not* in the work tree: it lives beside it
(``<task>/git``), where no sandbox mounts anything, so nothing an agent or a test writes can
plant a hook, an ``fsmonitor`` command or a filter in it. Every git call of the harness runs
with the system and global config ignored and hooks, fsmonitor, submodule recursion and
external diff drivers switched off; a ``.git`` an agent leaves anywhere in the work tree is
deleted (and so recorded as a change) before git looks at the tree.
"""

from __future__ import annotations

import io
import os
import stat
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

import git

from evoci import treefs
from evoci.agents.base import HARNESS_DIR
from evoci.errors import SandboxError, TaskSpecError

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "evoci", "GIT_AUTHOR_EMAIL": "evoci@evoci.invalid",
             "GIT_COMMITTER_NAME": "evoci", "GIT_COMMITTER_EMAIL": "evoci@evoci.invalid"}
GIT_EPOCH = 1_700_000_000  # commit dates: this + iteration, so SHAs are reproducible
# Config given on the command line wins over any file; it also reaches git's child processes.
SAFE_GIT_CONFIG = (
    "core.hooksPath=/dev/null", "core.fsmonitor=false", "core.untrackedCache=false", "core.sshCommand=false",
    "submodule.recurse=false", "diff.ignoreSubmodules=all", "protocol.allow=never",
    "core.pager=cat", "commit.gpgsign=false", "core.autocrlf=false",
)
SAFE_GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0"}
# Bytes in the longest relative path an agent's work may keep. git reaches a path through the whole
# of it, so past the system's 4,096 (PATH_MAX, less what git appends as it looks inside: a file at
# 4,092 was refused) `git add` warns, or stops with "fatal: unable to stat", and the node would fail.
GIT_LONGEST_PATH = 3072
# A committed .gitattributes decides how git shows, archives and converts the tree: "* -diff" makes
# every diff "Binary files differ" (the integrity scans read no line of it), export-ignore and
# export-subst make the graded tree (git archive) differ from the commit, text/eol/ident/filter
# rewrite content on checkout. $GIT_DIR/info/attributes outranks every .gitattributes, and "!name"
# puts each attribute back to git's default, so the harness reads the commit as it is.
_NEUTRAL_ATTRIBUTES = "* " + " ".join(f"!{name}" for name in (
    "diff", "text", "eol", "crlf", "ident", "filter", "working-tree-encoding", "export-ignore", "export-subst")) + "\n"


def open_source(repo: str) -> git.Repo:
    """The task's own repository, or a TaskSpecError saying what is wrong with it."""
    path = Path(repo)
    if not path.exists():
        raise TaskSpecError(f"repository {repo!r} does not exist — check the task's `repo` path")
    try:
        return git.Repo(path)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise TaskSpecError(f"{repo!r} is not a git repository — `repo` must point at a git work tree or bare repo") from exc


def resolve(source: git.Repo, ref: str, what: str) -> str:
    """The commit SHA ``ref`` names in ``source``, or a TaskSpecError naming the ref."""
    try:
        commit = source.commit(ref)
        commit.tree  # GitPython takes a full SHA on trust; reading the object proves the commit is there
        return commit.hexsha
    except (git.BadName, ValueError, git.GitCommandError) as exc:
        raise TaskSpecError(
            f"{what} ref {ref!r} does not exist in {source.working_dir or source.git_dir} "
            "— use a commit SHA, branch or tag of that repository"
        ) from exc


def extract_tree(source: git.Repo, sha: str, dest: Path, paths: list[str] | None = None) -> None:
    """Write the tree of ``sha`` (or only ``paths`` of it) into ``dest``."""
    buf = io.BytesIO()
    source.archive(buf, sha, format="tar", **({"path": paths} if paths else {}))
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        tar.extractall(dest, filter=_git_member)


def _git_member(member: tarfile.TarInfo, _dest: str) -> tarfile.TarInfo | None:
    """tarfile's "tar" filter (which keeps in-repo symlinks) without resolving each member's whole path.

    That check costs a lookup per level per member, cubic in depth: one chain of 1,200 folders an
    agent committed took six minutes to extract. It guards against absolute names, ``..`` and a
    name that passes through a link; git archive writes none of them (git holds no path under a
    link), and the first two are refused here by their text.
    """
    name = member.name.lstrip("/")
    if name != member.name or ".." in name.split("/"):
        return None
    high = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWGRP | stat.S_IWOTH  # cleared as "tar" does
    return member.replace(mode=member.mode & ~high, deep=False) if member.mode is not None else member


def tree_has(source: git.Repo, sha: str, path: str) -> bool:
    try:
        source.commit(sha).tree[path]
        return True
    except KeyError:
        return False


@dataclass(frozen=True)
class Workspace:
    """A work tree at ``path`` whose git folder is ``path.parent / "git"`` (``.evoci``, whatever it is, is never committed)."""

    path: Path

    @property
    def git_dir(self) -> Path:
        return self.path.parent / "git"

    @property
    def repo(self) -> git.Repo:
        """The repository, for reading history; commands that touch the work tree go through ``git``."""
        repo = git.Repo(self.git_dir)
        repo.git.update_environment(**SAFE_GIT_ENV, GIT_DIR=str(self.git_dir))
        return repo

    @property
    def git(self) -> git.cmd.Git:
        """git for this work tree, with every executable config switched off (see the module docstring)."""
        cmd = git.cmd.Git(self.path)
        cmd.update_environment(**SAFE_GIT_ENV, GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.path))
        cmd.set_persistent_git_options(c=list(SAFE_GIT_CONFIG))
        return cmd

    def reclaim_harness_dir(self) -> list[str]:
        """Make ``.evoci`` harness-owned again: a link, file or FIFO an agent put at that name is removed
        (and returned, to be recorded); a real folder stays."""
        found = treefs.kind(self.path, HARNESS_DIR)
        if found in (None, "folder"):
            return []
        treefs.remove(self.path, HARNESS_DIR)
        return [HARNESS_DIR]

    def purge_nested_git(self) -> list[str]:
        """Delete every ``.git`` in the work tree (an agent's planted repository or git-dir link), every
        path longer than git can hold (``GIT_LONGEST_PATH``) and every special file; return them. At any depth (``evoci.treefs``).

        Every git command on the tree comes after this walk, so it also gives back what git must
        read: folders and files the agent made unreadable (``treefs.walk``, ``treefs.let_owner_read``)."""
        self._neutral_attributes()
        found = []
        for rel, kind in treefs.walk(self.path):
            # A FIFO or socket git never tracks, but git opens .gitignore/.gitattributes blocking:
            # one named so held the node forever.
            if rel.rpartition("/")[2] == ".git" or len(os.fsencode(rel)) > GIT_LONGEST_PATH or kind == "special":
                treefs.remove(self.path, rel)  # a folder goes whole: the walk does not enter it
                found.append(rel)
            elif kind == "file":
                treefs.let_owner_read(self.path, rel)
        return sorted(found)

    @classmethod
    def create(cls, path: Path, source: git.Repo, base_sha: str, oracle_sha: str, tests_dir: str) -> tuple["Workspace", str]:
        """Create (or reuse) the workspace; return it and the SHA of iteration 0."""
        ws = cls(path)
        found = ws.tagged("iteration-0")
        if found:
            return ws, found
        ws.start_afresh()
        extract_tree(source, base_sha, path)
        ws.purge_nested_git()
        shutil.rmtree(path / tests_dir, ignore_errors=True)
        if tree_has(source, oracle_sha, tests_dir):
            extract_tree(source, oracle_sha, path, [tests_dir])
        return ws, ws.init("iteration-0", "evoci: iteration 0 — base codebase with the oracle's tests")

    @classmethod
    def fresh(cls, path: Path, source: git.Repo, base_sha: str) -> tuple["Workspace", str]:
        """A new workspace holding the base and nothing else, for an agent's one attempt; return it and
        the base's SHA in it. What a previous try left goes first, the git folder beside the work
        tree included: found there, it would make ``create`` skip building the tree."""
        cls(path).start_afresh()
        return cls.create(path, source, base_sha, base_sha, "tests")

    def tagged(self, tag: str) -> str | None:
        """The commit ``tag`` names in a complete workspace, or None (no repository, or a crash before the tag)."""
        if not self.git_dir.exists():
            return None
        try:
            return self.git.rev_parse("--verify", f"refs/tags/{tag}^{{commit}}").strip()
        except git.GitCommandError:
            return None

    def clear_stale_locks(self) -> list[str]:
        """Remove the lock files a killed git left in the git folder (``index.lock``, ``HEAD.lock``,
        a ref's ``.lock``); return them, relative to the git folder.

        Only for a caller that holds the task's lease, before its first git command: no other
        process works on this workspace then, so every lock found is a dead process's. Without
        this a run killed while git held the index could never be resumed."""
        if not self.git_dir.is_dir():
            return []
        found = sorted(p for p in self.git_dir.rglob("*.lock") if p.is_file() and not p.is_symlink()
                       and "objects" not in p.relative_to(self.git_dir).parts)
        for lock in found:
            lock.unlink(missing_ok=True)
        return [p.relative_to(self.git_dir).as_posix() for p in found]

    def _neutral_attributes(self) -> None:
        """Make the agent's ``.gitattributes`` powerless over the harness's git (``_NEUTRAL_ATTRIBUTES``).

        Written before every git command on the tree (this walk precedes them all), so a workspace
        made by an earlier evoci is covered from its next node on."""
        info = self.git_dir / "info"
        if self.git_dir.is_dir():
            info.mkdir(exist_ok=True)
            (info / "attributes").write_text(_NEUTRAL_ATTRIBUTES)

    def start_afresh(self) -> None:
        """Remove any half-made work tree and git folder; leave an empty work tree."""
        treefs.clear(self.path)  # an agent's folders may be nested deeper than shutil.rmtree recurses
        treefs.clear(self.git_dir)
        self.path.mkdir(parents=True)

    def init(self, tag: str, message: str, *, ignore: tuple[str, ...] = ()) -> str:
        """Make the git folder for the files already in the work tree, commit them as iteration 0
        and tag that commit ``tag`` (written last: it marks a complete workspace); return its SHA."""
        cmd = git.cmd.Git(self.path.parent)
        cmd.update_environment(**SAFE_GIT_ENV)
        cmd.init("-q", "--bare", "--initial-branch=evoci", str(self.git_dir))
        self.git.config("core.bare", "false")
        (self.git_dir / "info").mkdir(exist_ok=True)
        # "/.evoci", not "/.evoci/": the harness's name is excluded whatever an agent makes of it.
        (self.git_dir / "info" / "exclude").write_text("".join(f"{p}\n" for p in (f"/{HARNESS_DIR}", *ignore)))
        sha = self.commit(0, message)
        self.git.tag(tag, sha)
        return sha

    def checkout(self, sha: str) -> None:
        """Make the work tree exactly ``sha``: discard every change and untracked file."""
        try:
            self.purge_nested_git()
            self.git.checkout("--force", "--detach", sha)
            self.git.clean("-ffdx")
        except git.GitCommandError as exc:
            raise SandboxError(
                f"workspace {self.path} cannot check out {sha}: {exc} — delete {self.path.parent} to start this task afresh"
            ) from exc

    def changed_files(self) -> list[str]:
        """Paths changed, added or deleted in the work tree (harness files excluded), named as they are."""
        # -z: names as they are; without it git quotes a name holding a byte that is not ASCII ("caf\303\251.py")
        out = self.git.status("--porcelain", "-z", "--untracked-files=all", "--no-renames")
        return sorted(entry[3:] for entry in out.split("\0") if entry[3:])

    def commit(self, iteration: int, message: str) -> str:
        """Commit the whole work tree as ``iteration`` (even if nothing changed); return its SHA."""
        self.purge_nested_git()
        self.reclaim_harness_dir()  # what is left at .evoci is a real folder, which every exclude rule matches
        self.git.add("--all")
        date = f"{GIT_EPOCH + iteration} +0000"
        env = {**SAFE_GIT_ENV, **GIT_IDENTITY, "GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.path),
               "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        self.git.commit("--allow-empty", "--no-verify", "-q", "-m", message, env=env)
        return self.git.rev_parse("HEAD").strip()

    def restore(self, sha: str, folder: str) -> list[str]:
        """Put ``folder`` back exactly as it is in commit ``sha``; return the paths that differed."""
        cmd = self.git
        prefix = folder.rstrip("/") + "/"
        self.purge_nested_git()
        # -z: names as they are, never quoted by git (a byte that is not ASCII) nor cut at a space
        differ = set(cmd.diff("--name-only", "-z", "--no-ext-diff", "--no-renames", sha, "--", folder).split("\0"))
        untracked = set(cmd.ls_files("-z", "--others", "--exclude-standard", "--", folder).split("\0"))
        changed = sorted((differ | untracked) - {""})
        if changed:
            cmd.rm("-r", "-q", "--cached", "--ignore-unmatch", "--", folder)
            treefs.remove(self.path, folder)  # whatever stands there (a link, a FIFO): never followed
            if tree_has(self.repo, sha, folder):
                cmd.checkout(sha, "--", folder)
        return [p for p in changed if p.startswith(prefix) or p == folder]


def oracle_checkout(path: Path, source: git.Repo, oracle_sha: str) -> Path:
    """The oracle's tree at ``path`` (for computing the target set; agents never see it)."""
    marker = path / HARNESS_DIR / "sha"
    if marker.exists() and marker.read_text() == oracle_sha:
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    extract_tree(source, oracle_sha, path)
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(oracle_sha)
    return path
