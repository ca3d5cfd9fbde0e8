"""The architect and programmer nodes: run an agent in the workspace, enforce the rules.

Integrity is the harness's job, not the prompt's: whatever the architect changes besides
``requirement.xml`` is discarded (and recorded), and the oracle's tests are restored
after the programmer (any change to them is recorded as tampering) before the commit.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from prefect import task
from prefect.context import TaskRunContext
from evoci.logs import run_logger

from evoci import treefs
from evoci.agents import AgentContext, AgentOutcome, AgentStatus, Role, make_agent
from evoci.agents.base import HARNESS_DIR, REQUIREMENT_FILE, ModelCall, discard_over_budget
from evoci.agents.non_passed import write_non_passed
from evoci.domain import TestReport
from evoci.runtime import Prepared, RunContext, inject_fault
from evoci.sandbox import budget, open_sandbox
from evoci.workspace import Workspace
from evoci.tasks.caching import agent_key
from evoci.tasks.retry import NODE_OPTIONS


@dataclass
class ArchitectResult:
    requirement: str | None
    outcome: AgentOutcome
    discarded_files: list[str] = field(default_factory=list)


@dataclass
class ProgrammerResult:
    sha: str
    outcome: AgentOutcome
    tampered_files: list[str] = field(default_factory=list)


def _context(prepared: Prepared, run: RunContext, iteration: int, sandbox, requirement: str | None = None) -> AgentContext:
    return AgentContext(
        task=prepared.task, iteration=iteration, max_iterations=run.config.max_iterations, sandbox=sandbox,
        source_repo=Path(prepared.task.repo), base_sha=prepared.base_sha, oracle_sha=prepared.oracle_sha,
        requirement=requirement,
    )


def _keep(workspace: Workspace, run: RunContext, prepared: Prepared, iteration: int) -> None:
    """Copy the iteration's harness files (non-passed/, requirement.xml) to the run's artifacts."""
    dest = run.paths.artifacts(run.run_id, prepared.task.task_id) / f"iteration-{iteration}"
    # The folder is the agent's to shape (a link in its place was already removed by reclaim_harness_dir).
    treefs.copy_out(workspace.path, HARNESS_DIR, dest)


def _did(outcome: AgentOutcome, success: str) -> str:
    """What an agent did, for the log: ``success`` when it ended ok, else how it ended and why."""
    if outcome.status is AgentStatus.OK:
        return success
    message = outcome.message if len(outcome.message) <= 200 else outcome.message[:199] + "…"
    return f"ended with {outcome.status.value}" + (f" ({message})" if message else "")


def _run_agent(role: Role, run: RunContext, prepared: Prepared, ctx: AgentContext,
               fresh: Callable[[], None] | None = None) -> AgentOutcome:
    """Run the role's agent, recording each model call as it is answered; if infrastructure fails
    mid-attempt, keep the calls already paid for, then raise.

    With a command agent's ``max_try`` (the official SWE-CI harness's retry rule), an attempt that
    did not end ok is followed by a fresh one from the same input (``fresh`` restores it), up to
    ``max_try`` attempts; the last one is the outcome, every attempt's calls and steps are kept.

    Calls are keyed by a fresh id of this node execution: a new flow run, a node retry or a UI
    retry starts Prefect's run count at 1 again, but never reuses this id.
    """
    config = run.config.architect if role is Role.ARCHITECT else run.config.programmer
    task_run = TaskRunContext.get()
    paid = AgentOutcome(node_try=task_run.task_run.run_count if task_run else 1, node_run=uuid.uuid4().hex)
    task_id = prepared.task.task_id

    def on_call(call: ModelCall) -> None:
        paid.calls.append(call)
        run.facts.call(run.run_id, task_id, ctx.iteration, role.value, paid, len(paid.calls) - 1)

    ctx.on_call = on_call
    tries = int(config.options.get("max_try", 1) or 1) if config.kind == "command" and fresh else 1
    earlier: list[AgentOutcome] = []
    # The model gateway's request/response transcript of this node execution (an agent CLI's).
    ctx.transcript = (run.paths.artifacts(run.run_id, task_id) / "gateway"
                      / f"iteration-{ctx.iteration}-{role.value}-{paid.node_run}.jsonl")
    try:
        outcome = make_agent(role, config).run(ctx)
        while outcome.status is not AgentStatus.OK and len(earlier) + 1 < tries:
            earlier.append(outcome)
            fresh()  # type: ignore[misc]
            budget.forget(ctx.sandbox)  # what went over was just removed with the rest
            outcome = make_agent(role, config).run(ctx)
    except Exception as exc:
        partial = getattr(exc, "outcome", None)
        if isinstance(partial, AgentOutcome) and partial.calls:
            partial.node_try, partial.node_run = paid.node_try, paid.node_run
            run.facts.interrupted_calls(run.run_id, task_id, ctx.iteration, role.value, partial)
        raise
    outcome.node_try, outcome.node_run = paid.node_try, paid.node_run
    if earlier:
        outcome.calls = [c for o in earlier for c in o.calls] + outcome.calls
        outcome.trajectory = [{"attempt": k + 1, "status": o.status.value, "message": o.message, "steps": o.trajectory}
                              for k, o in enumerate(earlier)] + outcome.trajectory
        outcome.message = f"attempt {len(earlier) + 1} of at most {tries}: {outcome.message}"
    return outcome


node_options = dict(cache_key_fn=agent_key, **NODE_OPTIONS)


@task(name="architect", task_run_name="architect-{iteration}", **node_options)
def architect_task(prepared: Prepared, run: RunContext, iteration: int, sha: str, report: TestReport,
                   targets: list[str]) -> ArchitectResult:
    """Write the non-passed tests into the workspace; the architect turns them into requirement.xml."""
    started = time.monotonic()
    inject_fault(run.home, "architect", iteration)
    workspace = Workspace(Path(prepared.workspace))
    workspace.checkout(sha)
    sandbox = open_sandbox(run.config.sandbox, workspace.path, prepared.environment, run.paths)
    try:
        listed = write_non_passed(sandbox, report, targets)

        def fresh() -> None:
            workspace.checkout(sha)
            write_non_passed(sandbox, report, targets)

        outcome = _run_agent(Role.ARCHITECT, run, prepared, _context(prepared, run, iteration, sandbox), fresh)
        try:
            requirement = sandbox.read_file(REQUIREMENT_FILE).decode(errors="replace")
        except (FileNotFoundError, IsADirectoryError, ValueError):  # ValueError: a link out of the workspace
            requirement = None
    finally:
        sandbox.cleanup()
    if discard_over_budget(outcome, sandbox, lambda: workspace.checkout(sha)):
        requirement = None
    if requirement is None and outcome.status is AgentStatus.OK:
        outcome.status, outcome.message = AgentStatus.INVALID_OUTPUT, f"no {REQUIREMENT_FILE} was written"
    # First what git must not meet (a planted .git, special files, locked folders), then what git sees.
    discarded = sorted({*workspace.purge_nested_git(), *workspace.reclaim_harness_dir(), *workspace.changed_files()})
    _keep(workspace, run, prepared, iteration)
    workspace.checkout(sha)  # the architect may change nothing but requirement.xml
    run_logger().info(
        "task %s, iteration %d: the architect %s (%d non-passed test(s) given) in %.1f s%s",
        prepared.task.task_id, iteration, _did(outcome, f"wrote {REQUIREMENT_FILE}"), len(listed),
        time.monotonic() - started, f"; its changes to {len(discarded)} other file(s) were discarded" if discarded else "",
    )
    return ArchitectResult(requirement=requirement, outcome=outcome, discarded_files=discarded)


@task(name="programmer", task_run_name="programmer-{iteration}", **node_options)
def programmer_task(prepared: Prepared, run: RunContext, iteration: int, sha: str,
                    requirement: str | None) -> ProgrammerResult:
    """Implement the requirement; restore the oracle's tests; commit the iteration."""
    started = time.monotonic()
    inject_fault(run.home, "programmer", iteration)
    workspace = Workspace(Path(prepared.workspace))
    workspace.checkout(sha)
    if requirement is None:
        outcome = AgentOutcome(status=AgentStatus.INVALID_OUTPUT, message="no requirement from the architect: nothing to implement")
    else:
        sandbox = open_sandbox(run.config.sandbox, workspace.path, prepared.environment, run.paths)
        try:
            sandbox.write_file(REQUIREMENT_FILE, requirement)

            def fresh() -> None:
                workspace.checkout(sha)
                sandbox.write_file(REQUIREMENT_FILE, requirement)

            outcome = _run_agent(Role.PROGRAMMER, run, prepared, _context(prepared, run, iteration, sandbox, requirement),
                                 fresh)
        finally:
            sandbox.cleanup()
        discard_over_budget(outcome, sandbox, lambda: workspace.checkout(sha))
        inject_fault(run.home, "programmer-paid", iteration)  # a node that fails after its model calls were paid
    planted = workspace.purge_nested_git()  # a .git anywhere in the tree: git config, hooks, links
    planted += workspace.reclaim_harness_dir()  # .evoci made a link or a file: removed, never committed
    tampered = sorted({*planted, *workspace.restore(prepared.start_sha, prepared.task.tests_dir)})
    changed = workspace.changed_files()
    new_sha = workspace.commit(iteration, f"evoci: iteration {iteration} ({outcome.status.value})\n\n{outcome.message}")
    run_logger().info(
        "task %s, iteration %d: the programmer %s — %d file(s) changed, commit %s, in %.1f s%s",
        prepared.task.task_id, iteration, _did(outcome, "implemented the requirement"), len(changed), new_sha[:10],
        time.monotonic() - started, f"; {len(tampered)} test file(s) it changed were restored" if tampered else "",
    )
    return ProgrammerResult(sha=new_sha, outcome=outcome, tampered_files=tampered)
