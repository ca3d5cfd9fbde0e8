"""Per-run workspace repositories: one commit per iteration, nothing of the oracle's code.

The workspace is a fresh git repository (not a clone), so an agent that looks into
``.git`` finds no future history. Iteration 0 is the base's tree with the oracle's
tests folder in place of the base's; iteration i is committed on top of i − 1. Commits
use a fixed identity and dates derived from the iteration, so the same tree always gets
the same SHA: re-running a deterministic agent reproduces SHAs, and SHAs are what the
Prefect cache keys on.

The oracle's own tree is checked out separately (``oracle/``), for the harness only.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

import git

from evoci.agents.base import HARNESS_DIR
from evoci.errors import SandboxError, TaskSpecError

_IDENTITY = {"GIT_AUTHOR_NAME": "evoci", "GIT_AUTHOR_EMAIL": "evoci@evoci.invalid",
             "GIT_COMMITTER_NAME": "evoci", "GIT_COMMITTER_EMAIL": "evoci@evoci.invalid"}
_EPOCH = 1_700_000_000  # commit dates: this + iteration, so SHAs are reproducible


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
        return source.commit(ref).hexsha
    except (git.BadName, ValueError, git.GitCommandError) as exc:
        raise TaskSpecError(
            f"{what} ref {ref!r} does not exist in {source.working_dir or source.git_dir} "
            "— use a commit SHA, branch or tag of that repository"
        ) from exc


def _extract(source: git.Repo, sha: str, dest: Path, paths: list[str] | None = None) -> None:
    """Write the tree of ``sha`` (or only ``paths`` of it) into ``dest``."""
    buf = io.BytesIO()
    source.archive(buf, sha, format="tar", **({"path": paths} if paths else {}))
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tar:
        tar.extractall(dest, filter="tar")  # "tar" keeps in-repo symlinks


def tree_has(source: git.Repo, sha: str, path: str) -> bool:
    try:
        source.commit(sha).tree[path]
        return True
    except KeyError:
        return False


@dataclass(frozen=True)
class Workspace:
    """A workspace repository at ``path`` (``.evoci/`` inside it is never committed)."""

    path: Path

    @property
    def repo(self) -> git.Repo:
        return git.Repo(self.path)

    @classmethod
    def create(cls, path: Path, source: git.Repo, base_sha: str, oracle_sha: str, tests_dir: str) -> tuple["Workspace", str]:
        """Create (or reuse) the workspace; return it and the SHA of iteration 0."""
        ws = cls(path)
        if (path / ".git").exists():
            try:
                return ws, ws.repo.commit("refs/tags/iteration-0").hexsha
            except (git.BadName, ValueError):
                shutil.rmtree(path)  # a crash interrupted the creation: start again
        path.mkdir(parents=True)
        _extract(source, base_sha, path)
        shutil.rmtree(path / tests_dir, ignore_errors=True)
        if tree_has(source, oracle_sha, tests_dir):
            _extract(source, oracle_sha, path, [tests_dir])
        repo = git.Repo.init(path, initial_branch="evoci")
        with repo.config_writer() as cfg:
            cfg.set_value("core", "autocrlf", "false")
            cfg.set_value("commit", "gpgsign", "false")
        (path / ".git" / "info").mkdir(exist_ok=True)
        (path / ".git" / "info" / "exclude").write_text(f"/{HARNESS_DIR}/\n")
        sha = ws.commit(0, "evoci: iteration 0 — base codebase with the oracle's tests")
        repo.create_tag("iteration-0", ref=sha)  # written last: marks a complete workspace
        return ws, sha

    def checkout(self, sha: str) -> None:
        """Make the work tree exactly ``sha``: discard every change and untracked file."""
        repo = self.repo
        try:
            repo.git.checkout("--force", "--detach", sha)
            repo.git.clean("-ffdx")
        except git.GitCommandError as exc:
            raise SandboxError(
                f"workspace {self.path} cannot check out {sha}: {exc} — delete {self.path.parent} to start this task afresh"
            ) from exc

    def changed_files(self) -> list[str]:
        """Paths changed, added or deleted in the work tree (harness files excluded)."""
        out = self.repo.git.status("--porcelain", "--untracked-files=all", "--no-renames")
        return sorted(line[3:].strip('"') for line in out.splitlines() if line[3:])

    def commit(self, iteration: int, message: str) -> str:
        """Commit the whole work tree as ``iteration`` (even if nothing changed); return its SHA."""
        repo = self.repo
        repo.git.add("--all")
        date = f"{_EPOCH + iteration} +0000"
        env = {**_IDENTITY, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        repo.git.commit("--allow-empty", "--no-verify", "-q", "-m", message, env=env)
        return repo.head.commit.hexsha

    def restore(self, sha: str, folder: str) -> list[str]:
        """Put ``folder`` back exactly as it is in commit ``sha``; return the paths that differed."""
        repo = self.repo
        prefix = folder.rstrip("/") + "/"
        differ = set(repo.git.diff("--name-only", "--no-renames", sha, "--", folder).split())
        untracked = repo.git.ls_files("--others", "--exclude-standard", "--", folder).split()
        changed = sorted(differ | set(untracked))
        if changed:
            repo.git.rm("-r", "-q", "--cached", "--ignore-unmatch", "--", folder)
            shutil.rmtree(self.path / folder, ignore_errors=True)
            if tree_has(repo, sha, folder):
                repo.git.checkout(sha, "--", folder)
        return [p for p in changed if p.startswith(prefix) or p == folder]

    def diff_hash(self) -> str:
        """Hash of the uncommitted changes (empty string's hash when clean)."""
        diff = self.repo.git.diff("HEAD", "--binary") + "\n".join(self.changed_files())
        return hashlib.sha256(diff.encode()).hexdigest()[:16]


def oracle_checkout(path: Path, source: git.Repo, oracle_sha: str) -> Path:
    """The oracle's tree at ``path`` (for computing the target set; agents never see it)."""
    marker = path / HARNESS_DIR / "sha"
    if marker.exists() and marker.read_text() == oracle_sha:
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    _extract(source, oracle_sha, path)
    marker.parent.mkdir(exist_ok=True)
    marker.write_text(oracle_sha)
    return path
