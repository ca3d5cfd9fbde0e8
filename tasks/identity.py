"""The identity nodes: claim a run id for one config, and a task id for one spec; and how a task
that ends without a score is recorded (``ended``).

Each claim reads what the run recorded and writes only when it agrees (``Facts.claim_*``),
so it cannot wait in the spool: a database held by another process raises
``DatabaseLocked``, which these nodes retry like any infrastructure failure. They are
never cached: the recorded facts are the state they check.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger

from evoci.errors import LeaseLost, RunBusy, StorageError
from evoci.identity import config_drift, task_drift
from evoci.interrupt import Interrupted
from evoci.runtime import RunContext
from evoci.store import TaskRow
from evoci.tasks.retry import NODE_OPTIONS

node_options = {**NODE_OPTIONS, "persist_result": False, "cache_policy": NO_CACHE}


def claim_run(run: RunContext, dataset_tasks: int | None = None, max_iterations: int | None = None) -> None:
    """Record the run, or raise ``DriftError`` naming the config keys that differ from the recorded run."""
    recorded = run.facts.claim_run(run.run_id, protocol=run.config.protocol, dataset=run.dataset,
                                   max_iterations=max_iterations, config_hash=run.config.config_hash(),
                                   config=run.config.model_dump(mode="json"), dataset_tasks=dataset_tasks)
    if recorded is not None:
        raise config_drift(run.run_id, recorded["config"], run.config, recorded_dataset=recorded["dataset"],
                           dataset=run.dataset)


@task(name="claim-run", task_run_name="claim-run", **node_options)
def claim_run_task(run: RunContext, dataset_tasks: int | None = None, max_iterations: int | None = None) -> None:
    """``claim_run`` as a node, so a locked database is retried."""
    claim_run(run, dataset_tasks, max_iterations)


def record_run(run: RunContext, dataset_tasks: int | None = None, max_iterations: int | None = None) -> None:
    """Claim the run id for this config and dataset, retried like a node (a DriftError names what differs).

    Every protocol's flow calls it before its first task, with ``dataset_tasks`` (the tasks its
    dataset held, bad lines included) so ``run_completeness`` can tell a partial run from a whole one.
    ``max_iterations`` is the protocol's bound on iterations per task, as its views read it.
    """
    claim_run_task.with_options(retries=run.config.node_retries, retry_delay_seconds=run.config.retry_delays_s)(
        run, dataset_tasks, max_iterations)


@task(name="claim-task", task_run_name="claim-task-{stage}", **node_options)
def claim_task(run: RunContext, row: TaskRow, stage: str, resolved: tuple[str, ...] = ()) -> None:
    """Record the task, or raise ``DriftError`` if its spec (or resolved commits) changed under this run id."""
    found = run.facts.claim_task(row, resolved=resolved)
    if found:
        raise task_drift(run.run_id, row.task_id, found)


def ended(run: RunContext, task_id: str, exc: BaseException) -> None:
    """Record how a task ended on an exception its flow did not handle: ``interrupted`` (a signal;
    resumable) or ``infra_error`` (evoci itself failed: an unforeseen exception, a full disk, a
    read-only results file) — never the agent's outcome, never left ``running``.

    The task gets its status and a ``failures`` row naming the exception. Nothing is written for
    a task another process writes (``RunBusy``, ``LeaseLost``). The writes never wait (a lock or the
    disk may be what failed); what cannot be written is said on the console.
    """
    if isinstance(exc, (RunBusy, LeaseLost)) or not isinstance(exc, (Exception, Interrupted)):
        return
    status = "interrupted" if isinstance(exc, Interrupted) else "infra_error"
    kind = "interrupted" if status == "interrupted" else "infrastructure"
    reason = (f"{exc} — run the same command again to resume" if status == "interrupted"
              else f"{type(exc).__name__}: {exc}")
    try:
        run.facts.quick().failure(run.run_id, task_id=task_id, node="flow", kind=kind, error=exc)
        run.facts.quick().task_status(run.run_id, task_id, status, reason)
    except (LeaseLost, OSError, StorageError) as unrecorded:
        get_run_logger().error("task %s ended %s (%s), and that could not be recorded: %s", task_id, status, reason,
                               unrecorded)
