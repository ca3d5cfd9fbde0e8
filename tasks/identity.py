"""The identity nodes: claim a run id for one config, and a task id for one spec.

Each claim reads what the run recorded and writes only when it agrees (``Facts.claim_*``),
so it cannot wait in the spool: a database held by another process raises
``DatabaseLocked``, which these nodes retry like any infrastructure failure. They are
never cached: the recorded facts are the state they check.
"""

from __future__ import annotations

from prefect import task
from prefect.cache_policies import NO_CACHE

from evoci.identity import config_drift, task_drift
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
