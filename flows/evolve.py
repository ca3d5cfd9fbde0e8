"""The ``evolve`` flow: one SWE-CI task, iterated architect → programmer → test.

Before any work the run claims its id for its config and the task its id for its spec,
then for its resolved commits (``tasks/identity.py``): a change under an existing id is
refused, never merged. Iteration 0 tests the base codebase (with the oracle's tests); the
oracle's own test run defines the target set T. Each iteration i ≥ 1 runs the three nodes
and records its facts; the loop stops when all of T pass or after N iterations. Facts are written after
every node result, idempotently, so a killed run re-run with the same command resumes:
completed nodes come back from Prefect's persisted results and their facts are no-ops.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from prefect import flow
from prefect.logging import get_run_logger
from pydantic import BaseModel

from evoci.domain import RunConfig, TaskSpec, TestReport
from evoci import interrupt
from evoci.errors import DriftError, InfrastructureError, InputError, ProviderRejected
from evoci.identity import RESOLVED, task_identity
from evoci.progress import Event, emit
from evoci.runtime import Prepared, RunContext
from evoci.store import IterationRow, TaskRow, lease
from evoci.swe_ci.report import publish_task
from evoci.tasks.identity import ended, record_run
from evoci.tasks.quality import ORACLE_ITERATION
from evoci.tasks.quality import record as record_quality
from evoci.tasks.swe_ci import oracle_with_repairs, passed_targets, run_nodes
from evoci.workspace import Workspace


class TaskSummary(BaseModel):
    """How one task's evolution ended (the scores themselves live in the SQL views)."""

    run_id: str
    task_id: str
    status: str  # done | invalid | input_error | infra_error
    iterations: int = 0
    passed: int = 0
    targets: int = 0
    reason: str | None = None
    stops_run: bool = False  # the model provider rejected the run's settings: every other task would fail too
    refused: bool = False  # its spec changed under the run id: its recorded results were kept, nothing was done


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@flow(name="evolve", flow_run_name="evolve-{task.task_id}", log_prints=True)
def evolve(task: TaskSpec, config: RunConfig = RunConfig(), dataset: str = "adhoc",
           home: str | None = None, db: str | None = None) -> TaskSummary:
    """Evolve one task's base toward its oracle; record everything in DuckDB."""
    with lease.scope():  # the leases this flow takes end with it (or with the command around it)
        run = RunContext.create(config, dataset, home=home, db=db)
        try:
            return evolve_in_run(task, run)
        finally:
            # Not on a signal: drawing the plot imports matplotlib, seconds of a stop that must take
            # under a second of evoci's own time (the page is published when the task resumes and ends).
            if not interrupt.stopping():
                publish_task(run, task.task_id)  # summary, table and plot on the run's page; never raises


def evolve_in_run(task: TaskSpec, run: RunContext) -> TaskSummary:
    log = get_run_logger()
    facts, config = run.facts, run.config
    nodes = run_nodes(run)
    row = TaskRow(run.run_id, task.task_id, task.protocol, "running", repo=task.repo, base_ref=task.base_ref,
                  oracle_ref=task.oracle_ref, metadata=task.metadata, spec=task_identity(task))
    try:
        record_run(run, max_iterations=config.max_iterations)
        nodes["claim"](run, row, "spec")
        emit(Event(run.run_id, task.task_id, "prepare", max_iterations=config.max_iterations))
        prepared: Prepared = nodes["prepare"](task, run)
        # The task's lease is ours: a git lock in its workspace is a killed process's, and would stop every node.
        Workspace(Path(prepared.workspace)).clear_stale_locks()
        prepared = prepared.model_copy(update={"environment": prepared.environment.with_requirements(task.extra_requirements)})
        prepared = _with_task_image(prepared)
        oracle, prepared = oracle_with_repairs(nodes, prepared, run)
        nodes["claim"](run, TaskRow(**{**row.__dict__, "base_sha": prepared.base_sha, "oracle_sha": prepared.oracle_sha,
                                       "environment_hash": prepared.environment.content_hash}), "resolved", RESOLVED)
        targets = sorted(oracle.passed())
        facts.targets(run.run_id, task.task_id, {t: "target" for t in targets})
        emit(Event(run.run_id, task.task_id, "oracle", passed=len(targets), targets=len(targets)))
        started = _now()
        t0 = time.monotonic()
        report: TestReport = nodes["test"](prepared, run, "0", prepared.start_sha)
        _record(run, task.task_id, 0, prepared.start_sha, report, targets, started, time.monotonic() - t0)
        invalid = _invalid(oracle, report, targets)
        if invalid:
            log.warning("task %s is invalid and is skipped: %s", task.task_id, invalid)
            facts.failure(run.run_id, task_id=task.task_id, node="test", kind="invalid", error=invalid)
            facts.task_status(run.run_id, task.task_id, "invalid", invalid)
            emit(Event(run.run_id, task.task_id, "invalid", message=invalid))
            return TaskSummary(run_id=run.run_id, task_id=task.task_id, status="invalid", targets=len(targets),
                               passed=passed_targets(report, targets), reason=invalid)
        quality = [_quality(nodes, prepared, run, ORACLE_ITERATION, prepared.oracle_sha),
                   _quality(nodes, prepared, run, 0, prepared.start_sha)]
        sha, iteration = prepared.start_sha, 0
        emit(Event(run.run_id, task.task_id, "iteration", 0, passed_targets(report, targets), len(targets), config.max_iterations))
        while passed_targets(report, targets) < len(targets) and iteration < config.max_iterations:
            interrupt.check()
            iteration += 1
            started, t0 = _now(), time.monotonic()
            arch = nodes["architect"](prepared, run, iteration, sha, report, targets)
            prog = nodes["programmer"](prepared, run, iteration, sha, arch.requirement)
            report = nodes["test"](prepared, run, str(iteration), prog.sha)
            sha = prog.sha
            _record(run, task.task_id, iteration, sha, report, targets, started, time.monotonic() - t0,
                    architect=arch.outcome, programmer=prog.outcome, tampered=prog.tampered_files,
                    discarded=arch.discarded_files)
            quality.append(_quality(nodes, prepared, run, iteration, sha))
            emit(Event(run.run_id, task.task_id, "iteration", iteration, passed_targets(report, targets), len(targets),
                       config.max_iterations))
    except DriftError as exc:
        # The recorded results stay as they are: no status of theirs is touched.
        log.error("task %s: %s", task.task_id, exc)
        facts.quick().failure(run.run_id, task_id=task.task_id, node="identity", kind="input", error=exc)
        emit(Event(run.run_id, task.task_id, "input_error", message=str(exc)))
        return TaskSummary(run_id=run.run_id, task_id=task.task_id, status="input_error", reason=str(exc),
                           refused=True)
    except InputError as exc:
        log.error("task %s: %s", task.task_id, exc)
        node = "agent" if isinstance(exc, ProviderRejected) else "prepare"
        facts.quick().failure(run.run_id, task_id=task.task_id, node=node, kind="input", error=exc)
        facts.quick().task_status(run.run_id, task.task_id, "input_error", str(exc))
        emit(Event(run.run_id, task.task_id, "input_error", message=str(exc)))
        return TaskSummary(run_id=run.run_id, task_id=task.task_id, status="input_error", reason=str(exc),
                           stops_run=isinstance(exc, ProviderRejected))
    except InfrastructureError as exc:
        # Retries are exhausted: never scored; the flow run fails so it can be retried. The
        # failure path never waits for the database (a lock may be what failed): it spools.
        facts.quick().failure(run.run_id, task_id=task.task_id, node="flow", kind="infrastructure", error=exc)
        facts.quick().task_status(run.run_id, task.task_id, "infra_error", str(exc))
        emit(Event(run.run_id, task.task_id, "failed", message=str(exc)))
        raise
    except BaseException as exc:  # a signal, or a failure evoci did not foresee: recorded, never left 'running'
        ended(run, task.task_id, exc)
        emit(Event(run.run_id, task.task_id, "failed", message=str(exc)))
        raise
    record_quality(run, task.task_id, [q for q in quality if q])
    passed = passed_targets(report, targets)
    facts.task_status(run.run_id, task.task_id, "done")
    log.info("task %s: %d of %d target tests pass after %d iteration(s)%s", task.task_id, passed, len(targets),
             iteration, " — solved" if passed == len(targets) else "")
    emit(Event(run.run_id, task.task_id, "done", iteration, passed, len(targets), config.max_iterations))
    return TaskSummary(run_id=run.run_id, task_id=task.task_id, status="done", iterations=iteration,
                       passed=passed, targets=len(targets))


def _with_task_image(prepared: Prepared) -> Prepared:
    """A task that ships its own image (SWE-CI release) runs base and oracle in it under Docker."""
    task = prepared.task
    if not task.image_archive:
        return prepared
    environment = prepared.environment.model_copy(update={"image_archive": task.image_archive,
                                                          "image_digest": task.image_digest})
    return prepared.model_copy(update={"environment": environment})


def _quality(nodes: dict, prepared: Prepared, run: RunContext, iteration: int, sha: str) -> tuple | None:
    """Start measuring commit ``sha`` beside the loop (it reads only its own copy of the commit)."""
    if run.config.code_quality:
        return iteration, sha, nodes["quality"].submit(prepared, run, iteration, sha)
    return None


def _invalid(oracle: TestReport, base: TestReport, targets: list[str]) -> str | None:
    """Why the task cannot be scored, or None. The views flag the same conditions."""
    if not targets:
        return f"no test passes on the oracle (its test run ended {oracle.status.value}) — check the task's test command and environment"
    if passed_targets(base, targets) == len(targets):
        return f"no gap: all {len(targets)} target tests already pass on the base (n(c*) = n(c0))"
    return None


def _record(run: RunContext, task_id: str, iteration: int, sha: str, report: TestReport, targets: list[str],
            started: datetime, wall_s: float, *, architect=None, programmer=None, tampered=(), discarded=()) -> None:
    run.facts.iteration(IterationRow(
        run_id=run.run_id, task_id=task_id, iteration=iteration, status=report.status.value,
        outcomes=report.outcomes_for(targets), codebase_sha=sha, architect=architect, programmer=programmer,
        tampered_files=sorted({*tampered, *report.graded_overrides}), discarded_files=list(discarded),
        integrity_flags=list(report.integrity_flags), started_at=started, finished_at=_now(), wall_s=wall_s, test_s=report.duration_s,
    ))
