"""The built-in demo task: ``semverkit``, a small semantic-versioning library, and its history.

semverkit parses, orders and bumps SemVer 2.0.0 versions and matches them against ranges
(``>=1.0,<2``, ``^1.2``, ``~1.2.3``, ``1.x``, ``A || B``, ``max_satisfying``). Its history
lives in ``history/NN_slug/`` as one folder per commit and is built into a real git
repository with fixed authors and dates, so every machine gets the same SHAs. The base
commit only parses, compares and bumps (23 of the oracle's 93 tests pass); nine commits
add errors, prerelease bumps, comparator ranges, caret/tilde, wildcards and unions,
version selection and npm's prerelease rule. Commit 04, a refactor, breaks one test that
commit 06 fixes, so the human trajectory is not monotonic.
"""

from evoci.demo.repo import DemoRepo, build_demo_repo, demo_task

__all__ = ["DemoRepo", "build_demo_repo", "demo_task"]
