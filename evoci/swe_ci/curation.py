"""Mining SWE-CI candidate pairs from a repository's history (SWE-CI §3.1, curation steps 1–2).

1. Walk the first-parent history of ``ref`` (the main line: merges count as one commit each).
2. Cut it into maximal spans of consecutive commits whose dependency files (``DEPENDENCY_FILES``
   at the repository's top) are byte-for-byte the same: within a span one environment serves
   every commit, so the span's first commit is a base and its last an oracle.
3. Keep a span's (first, last) pair when its diff changes at least ``min_changed_lines`` lines
   outside test files (paper: 1,000 for candidates).

Running both ends' tests and keeping pairs whose oracle passes at least ``min_gap`` more target
tests (paper: 5) is the curate flow's work (``flows/curate.py``), in the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass

import git
from pydantic import BaseModel, Field

from evoci.domain import DEPENDENCY_FILES


class CurateConfig(BaseModel):
    """What makes a pair a task. Stored whole with the curation run."""

    ref: str = Field("HEAD", description="The branch or commit whose first-parent history is mined.")
    min_changed_lines: int = Field(1000, ge=0, description="Least lines changed outside tests (paper: 1,000).")
    min_gap: int = Field(5, ge=1, description="Least more target tests passing on the oracle than on the base (paper: 5).")
    tests_dir: str = Field("tests", description="The test folder (replaced by the oracle's when tests run).")
    max_repairs: int = Field(3, ge=0, description="Environment self-repair rounds per pair.")
    concurrency: int = Field(2, ge=1, description="Pairs checked at once.")


@dataclass(frozen=True)
class Span:
    """Commits ``first`` .. ``last`` (indexes into the first-parent history, oldest = 0) with one set of dependency files."""

    first: int
    last: int
    base_sha: str
    oracle_sha: str
    commits: int


@dataclass(frozen=True)
class Candidate:
    """A span's pair with its size; ``reason`` says why it is not a task (None: run its tests)."""

    span: Span
    changed_lines: int
    changed_files: int
    reason: str | None


def first_parent(repo: git.Repo, ref: str = "HEAD") -> list[str]:
    """The first-parent history of ``ref``, oldest first."""
    return [c.hexsha for c in reversed(list(repo.iter_commits(ref, first_parent=True)))]


def spans(repo: git.Repo, history: list[str]) -> list[Span]:
    """Maximal runs of consecutive commits whose dependency files are identical."""
    found: list[Span] = []
    start = 0
    for i in range(1, len(history) + 1):
        if i == len(history) or _dependencies(repo, history[i]) != _dependencies(repo, history[start]):
            found.append(Span(start, i - 1, history[start], history[i - 1], i - start))
            start = i
    return found


def is_test_path(path: str, tests_dir: str) -> bool:
    """A test file: under the tests folder, or with "test" in its name (as SWE-EVO splits patches)."""
    return path.split("/")[0] == tests_dir or "test" in path.rsplit("/", 1)[-1].lower()


def candidates(repo: git.Repo, config: CurateConfig) -> list[Candidate]:
    """Every span's pair, with the reason it is rejected before any test runs (or None)."""
    found = []
    for span in spans(repo, first_parent(repo, config.ref)):
        if span.commits < 2:
            found.append(Candidate(span, 0, 0, "single_commit: the span has one commit, so no pair"))
            continue
        lines, files = changed_source(repo, span.base_sha, span.oracle_sha, config.tests_dir)
        reason = None
        if lines < config.min_changed_lines:
            reason = f"too_small: {lines} changed non-test line(s) < {config.min_changed_lines}"
        found.append(Candidate(span, lines, files, reason))
    return found


def changed_source(repo: git.Repo, base: str, oracle: str, tests_dir: str) -> tuple[int, int]:
    """Lines added + deleted, and files changed, outside test files between two commits."""
    lines = files = 0
    for row in repo.git.diff("--numstat", "--no-renames", base, oracle).splitlines():
        added, deleted, path = row.split("\t", 2)
        if is_test_path(path, tests_dir):
            continue
        files += 1
        if added != "-":  # binary files have no line counts
            lines += int(added) + int(deleted)
    return lines, files


def _dependencies(repo: git.Repo, sha: str) -> dict[str, str]:
    tree = repo.commit(sha).tree
    found = {}
    for name in DEPENDENCY_FILES:
        try:
            found[name] = tree[name].hexsha
        except KeyError:
            continue
    return found
