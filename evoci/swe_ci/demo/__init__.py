"""SWE-CI's built-in demo task: ``semverkit``, a small semantic-versioning library, and its history.

semverkit parses, orders and bumps SemVer 2.0.0 versions and matches them against ranges
(``>=1.0,<2``, ``^1.2``, ``~1.2.3``, ``1.x``, ``A || B``, ``max_satisfying``). Its history
lives in ``history/NN_slug/`` as one folder per commit and is built into a real git
repository (``evoci.demo_repo``) with fixed authors and dates, so every machine gets the same SHAs. The base
commit only parses, compares and bumps (23 of the oracle's 93 tests pass); nine commits
add errors, prerelease bumps, comparator ranges, caret/tilde, wildcards and unions,
version selection and npm's prerelease rule. Commit 04, a refactor, breaks one test that
commit 06 fixes, so the human trajectory is not monotonic.
"""

from __future__ import annotations

from pathlib import Path

from evoci.demo_repo import BASE_TAG, ORACLE_TAG, build_demo_repo
from evoci.domain import TaskSpec

HISTORY_DIR = Path(__file__).parent / "history"  # for evoci.demo_repo's build_demo_repo and load_history
TITLE = "semverkit: a small semantic-versioning library (evoci's built-in demo)"

__all__ = ["HISTORY_DIR", "demo_task"]


def demo_task(dest: Path) -> TaskSpec:
    """The built-in SWE-CI task: evolve the demo's base commit toward its oracle."""
    repo = build_demo_repo(dest, HISTORY_DIR)
    return TaskSpec(
        task_id="demo",
        repo=str(repo.path),
        base_ref=BASE_TAG,
        oracle_ref=ORACLE_TAG,
        metadata={"title": TITLE},
    )
