"""The ``benchmark`` flow: evolve every task of a dataset, a few at a time.

Each task runs as its own ``evolve`` subflow (one task graph per task in the UI). Bad
dataset lines and tasks that fail are recorded and the others go on; if any task failed
for infrastructure reasons the benchmark run ends Failed, so a retry of it re-runs only
what did not complete (everything else comes back from persisted results).
"""

from __future__ import annotations

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import PrefectFuture, as_completed
from prefect.logging import get_run_logger

from evoci.datasets import dataset_name, load_dataset
from evoci.domain import RunConfig, TaskSpec
from evoci.runtime import RunContext
from evoci.flows.evolve import TaskSummary, evolve, record_run


@task(name="evolve-task", task_run_name="evolve-{spec.task_id}", cache_policy=NO_CACHE, persist_result=False)
def evolve_one(spec: TaskSpec, config: RunConfig, dataset: str, home: str, db: str) -> TaskSummary:
    """Run the ``evolve`` subflow for one task."""
    return evolve(spec, config, dataset, home, db)


@flow(name="benchmark", flow_run_name="benchmark-{dataset}")
def benchmark(dataset: str = "demo", config: RunConfig = RunConfig(), home: str | None = None,
              db: str | None = None) -> list[TaskSummary]:
    """Evolve every task of ``dataset`` (``demo`` or a JSONL file), ``config.concurrency`` at once."""
    log = get_run_logger()
    run = RunContext.create(config, dataset_name(dataset), home=home, db=db)
    data = load_dataset(dataset, run.paths)
    record_run(run)
    for error in data.errors:
        log.error("skipped: %s", error)
        run.facts.failure(run.run_id, node="dataset", kind="input", error=error)
    log.info("run %s: %d task(s), %d bad dataset line(s), %d at once", run.run_id, len(data.tasks),
             len(data.errors), config.concurrency)
    pending = list(data.tasks)
    running: list[PrefectFuture] = []
    summaries: list[TaskSummary] = []
    failed: list[str] = []
    while pending or running:
        while pending and len(running) < config.concurrency:
            spec = pending.pop(0)
            running.append(evolve_one.submit(spec, config, data.name, run.home, run.db))
        done = next(as_completed(running))
        running.remove(done)
        try:
            summaries.append(done.result())
        except Exception as exc:  # recorded by the subflow; the others go on
            failed.append(f"{exc}")
    run.facts.run_finished(run.run_id)
    if failed:
        raise RuntimeError(f"{len(failed)} task(s) failed for infrastructure reasons (retry this flow run): "
                           + "; ".join(failed))
    return summaries
