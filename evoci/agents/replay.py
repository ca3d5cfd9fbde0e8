"""The human-replay agent: the embedded default and a real baseline.

The architect derives ``requirement.xml`` from the failing tests exactly where an LLM
architect would (``.evoci/non-passed/`` in, ``.evoci/requirement.xml`` out). The
programmer replays the task's real history: iteration i applies the next chunk of the
first-parent commits between base and oracle, test files excluded, so the run reaches
the oracle's code by iteration N at the latest. Its EvoScore is the human trajectory's.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import git

from evoci.agents.base import REQUIREMENT_FILE, AgentContext, AgentOutcome, AgentStatus, ModelCall, Role
from evoci.agents.non_passed import SEVERITY, read_summary
from evoci.agents.requirement import render_requirements

MAX_REQUIREMENTS = 5
_REPLAY_CALL = ModelCall(model="human-replay", provider="replay")


class ReplayArchitect:
    """Groups the non-passed tests by test module and asks for the most urgent groups."""

    role = Role.ARCHITECT
    name = "replay"

    def run(self, ctx: AgentContext) -> AgentOutcome:
        start = time.monotonic()
        summary = read_summary(ctx.sandbox)
        groups: dict[str, list[dict[str, str]]] = defaultdict(list)
        for line in summary:
            groups[line["test_id"].split("::", 1)[0]].append(line)
        # SWE-CI priority: errors before failures before missing, then most tests unlocked.
        ranked = sorted(groups.items(), key=lambda kv: (min(SEVERITY.get(t["outcome"], 3) for t in kv[1]), -len(kv[1]), kv[0]))
        xml = render_requirements([_requirement(module, tests) for module, tests in ranked[:MAX_REQUIREMENTS]])
        ctx.sandbox.write_file(REQUIREMENT_FILE, xml)
        return AgentOutcome(
            status=AgentStatus.OK,
            message=f"{len(summary)} non-passed tests in {len(groups)} modules; {min(len(groups), MAX_REQUIREMENTS)} requirements",
            calls=[_REPLAY_CALL],
            trajectory=[{"role": "architect", "requirement": xml}],
            seconds=time.monotonic() - start,
        )


def _requirement(module: str, tests: list[dict[str, str]]) -> dict[str, str]:
    names = [t["test_id"].split("::", 1)[-1] for t in tests]
    reasons = sorted({t["reason"] for t in tests if t["reason"]})
    subject = Path(module).stem.removeprefix("test_")
    return {
        "location": f"the code exercised by {module} (`{subject}`)",
        "description": f"{len(tests)} test(s) in {module} do not pass: " + ", ".join(names[:10])
        + (" …" if len(names) > 10 else ""),
        "contract": "; ".join(reasons[:5]) or "behave as the tests in " + module + " specify",
        "acceptance": "these tests pass: " + ", ".join(t["test_id"] for t in tests[:20]),
    }


class ReplayProgrammer:
    """Applies the next commit(s) of the real history, outside the tests folder."""

    role = Role.PROGRAMMER
    name = "replay"

    def run(self, ctx: AgentContext) -> AgentOutcome:
        start = time.monotonic()
        history = _history(str(ctx.source_repo), ctx.base_sha, ctx.oracle_sha)
        chunk = max(1, math.ceil(len(history) / ctx.max_iterations))
        commits = history[(ctx.iteration - 1) * chunk : ctx.iteration * chunk]
        repo = git.Repo(ctx.source_repo)
        changed: list[str] = []
        for sha in commits:
            changed += _apply(repo, sha, ctx)
        return AgentOutcome(
            status=AgentStatus.OK,
            message=f"replayed {len(commits)} commit(s): " + ", ".join(s[:10] for s in commits) if commits
            else "history exhausted: nothing left to replay",
            calls=[_REPLAY_CALL],
            trajectory=[{"role": "programmer", "commits": commits, "files": changed}],
            seconds=time.monotonic() - start,
        )


@lru_cache(maxsize=64)
def _history(repo: str, base: str, oracle: str) -> tuple[str, ...]:
    """First-parent commits after ``base`` up to and including ``oracle``, oldest first."""
    out = git.Repo(repo).git.rev_list("--first-parent", "--reverse", f"{base}..{oracle}")
    return tuple(out.split())


def _apply(repo: git.Repo, sha: str, ctx: AgentContext) -> list[str]:
    """Write one commit's non-test changes into the sandbox; return the paths touched."""
    commit = repo.commit(sha)
    tests = ctx.task.tests_dir.rstrip("/") + "/"
    touched = []
    for diff in commit.parents[0].diff(commit):
        for path in {diff.a_path, diff.b_path} - {None}:
            if path.startswith(tests):
                continue
            touched.append(path)
            if diff.deleted_file or (diff.renamed_file and path == diff.a_path):
                ctx.sandbox.exec(["rm", "-f", "--", path], timeout=30)
            else:
                ctx.sandbox.write_file(path, diff.b_blob.data_stream.read())
    return sorted(touched)
