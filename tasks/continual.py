"""The SWE-Bench-CL nodes: one attempt = an agent node + a grade node, at one cell a(i, j).

Preparing an issue (repository, base, environment) is the SWE-EVO prepare node: an issue
is a SWE-bench-format instance. The agent node hands a workspace agent only the issue's
base checkout and ``task_prompt`` (problem, hints, retrieved memory); the baselines read
the answers here, harness-side. Grading is ``evoci.swebench.grade``.

Cache keys hold the cell (memory stage, position) and the attempt, so every attempt is its
own node, and the retrieved memory's hash, so a different memory is a different attempt;
a retried flow run reads completed attempts back instead of redoing them.
"""

from __future__ import annotations

import hashlib
from typing import Any

import git
from prefect import task
from prefect.context import TaskRunContext

from evoci.grading import GRADER_VERSION
from evoci.logs import run_logger
from evoci.runtime import RunContext, inject_fault
from evoci.sandbox import open_sandbox
from evoci.swe_bench_cl.agents import BASELINES, baseline_patch, workspace_patch
from evoci.swe_bench_cl.loader import CLIssue
from evoci.swe_evo.agents import Prediction
from evoci.swebench.grade import LAYOUT, Grade
from evoci.tasks.retry import NODE_OPTIONS
from evoci.tasks.swe_evo import EvoPrepared, evo_grade_task
from evoci.workspace import Workspace


def _key(*parts: Any) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def cl_agent_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, issue (its content), cell, attempt, memory, environment or agent config."""
    run, prepared = args["run"], args["prepared"]
    return _key("cl-agent", run.run_id, prepared.instance.instance_id, prepared.instance.record_hash, args["stage"],
                args["attempt"], hashlib.sha256(args["memory"].encode()).hexdigest(),
                prepared.environment.content_hash, run.config.programmer.model_dump_json())


def cl_grade_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, issue, cell, attempt, patch, environment, timeout, sandbox config,
    layout (where and as whom the tests run) or grading path (``GRADER_VERSION``)."""
    run, prepared, patch = args["run"], args["prepared"], args["patch"]
    digest = "none" if patch is None else hashlib.sha256(patch.encode()).hexdigest()
    return _key("cl-test", run.run_id, prepared.instance.instance_id, prepared.instance.record_hash, args["stage"],
                args["attempt"], digest, prepared.environment.content_hash, run.config.test_timeout_s,
                run.config.sandbox.model_dump_json(), LAYOUT.identity, GRADER_VERSION)


@task(name="agent", task_run_name="agent a({stage},{issue.position}) #{attempt}", cache_key_fn=cl_agent_key,
      **NODE_OPTIONS)
def cl_agent_task(prepared: EvoPrepared, run: RunContext, issue: CLIssue, stage: int, attempt: int,
                  memory: str) -> Prediction:
    """One attempt's patch from ``run.config.programmer``, with ``memory`` (retrieved experiences) in its prompt."""
    inject_fault(run.home, "agent", stage)
    config = run.config.programmer
    if config.kind in BASELINES:
        prediction = baseline_patch(config, issue, stage)
    else:
        path = run.paths.workspace(run.run_id, f"{issue.instance_id}@{stage}.{attempt}")
        workspace, start = Workspace.fresh(path, git.Repo(prepared.repo), prepared.base_sha)  # every attempt: the clean base
        sandbox = open_sandbox(run.config.sandbox, workspace.path, prepared.environment, run.paths)
        try:
            prediction = workspace_patch(config, issue, memory, workspace, start, sandbox)
        finally:
            sandbox.cleanup()
    lines = len(prediction.patch.splitlines()) if prediction.patch else 0
    run_logger().info("issue %s at a(%d,%d) attempt %d: the %s agent %s", issue.instance_id, stage, issue.position,
                      attempt, config.kind, f"made a {lines}-line patch" if lines else "made no change")
    return prediction


@task(name="test", task_run_name="test a({stage},{issue.position}) #{attempt}", cache_key_fn=cl_grade_key,
      **NODE_OPTIONS)
def cl_grade_task(prepared: EvoPrepared, run: RunContext, issue: CLIssue, stage: int, attempt: int,
                  patch: str | None) -> Grade:
    """Grade one attempt's patch on the issue's clean base with its tests (the SWE-EVO grade node's body)."""
    inject_fault(run.home, "test", stage)
    return evo_grade_task.fn(prepared, run, patch)


# pytest must not collect this module's task as a test.
cl_grade_task.__test__ = False
