"""The ``benchmark`` flow: evolve every task of a dataset, a few at a time.

Each task runs as its own ``evolve`` subflow (one task graph per task in the UI), on a
worker thread that carries the parent flow's context. Subflows are deliberately not
wrapped in a task: a task opens a Prefect transaction, and node results nested in it
would be committed only when the whole task ends — a crash would lose them all.

With ``task_deployment`` (``evolve/NAME``, a deployment on a work pool), each task is instead a
flow run of that deployment, which any worker polling the pool may take, on any host; the
benchmark waits for them and reads each task's outcome from the results store, which must then
be one that every worker writes (PostgreSQL). Workers use their own ``EVOCI_HOME``.

Bad dataset lines and failed tasks are recorded and the others go on; if any task
failed for infrastructure reasons the benchmark run ends Failed, so a retry of it
re-runs only what did not complete (the rest comes back from persisted results).
"""

from __future__ import annotations

import contextvars
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable

from prefect import flow
from prefect.logging import get_run_logger

from evoci import interrupt
from evoci.swe_ci.datasets import dataset_name, load_dataset
from evoci.swe_ci.report import publish_run
from evoci.domain import RunConfig, TaskSpec
from evoci.errors import ProviderRejected, is_infrastructure, orchestration_unavailable
from evoci.runtime import RunContext
from evoci.deployments.pool import OnPool, check_pool
from evoci.store import lease
from evoci.flows.evolve import TaskSummary, evolve
from evoci.logs import run_logger
from evoci.tasks.identity import record_run


# The embedded Prefect server keeps its state in SQLite, which answers 503 when many subflows write
# at once (seen from 4 at once on 2 cores), after the Prefect client's own retries. A subflow
# refused that way recorded nothing that counts: it is started again, and resumes from its cached
# nodes, after these pauses.
API_PAUSES_S = (5.0, 20.0, 60.0)


def _resilient(subflow: Any, name: str, pauses: tuple[float, ...]) -> Callable[..., Any]:
    """``subflow``, started again after each pause in ``pauses`` while Prefect's API is unavailable."""

    def call(*args: Any) -> Any:
        for pause in pauses:
            try:
                return subflow(*args)
            except Exception as exc:
                if not orchestration_unavailable(exc) or interrupt.stopping():
                    raise
                run_logger().warning("%s: Prefect's API is unavailable (%s); starting it again in %.0f s",
                                     name, (str(exc).splitlines() or [type(exc).__name__])[0][:200], pause)
                interrupt.sleep(pause)
        return subflow(*args)

    return call


def each_in_subflows(subflow: Any, items: list[tuple[str, Any]], concurrency: int, *args: Any,
                     stop: Callable[[Any], str | None] | None = None,
                     pauses: tuple[float, ...] = API_PAUSES_S) -> tuple[list, list[tuple[str, Exception]], str | None]:
    """``subflow(item, *args)`` for each (name, item), ``concurrency`` at once, on threads carrying
    this flow's context. Returns the results of those that returned (in item order), (name, error)
    for the others (each subflow records its own failure, so the others go on), and the reason
    ``stop(result)`` gave to end the fan-out early: after it, no further item starts. A subflow that
    Prefect's API refused (5xx) is started again after each of ``pauses``."""
    order = {name: i for i, (name, _) in enumerate(items)}
    queue = iter(items)
    results: list[tuple[str, Any]] = []
    failed: list[tuple[str, Exception]] = []
    stopped: str | None = None
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix=subflow.name) as pool:
        running: dict[Future, str] = {}

        def start_next() -> None:
            name, item = next(queue, (None, None))
            if name is not None and stopped is None and not interrupt.stopping():
                call = _resilient(subflow, name, pauses)
                running[pool.submit(contextvars.copy_context().run, call, item, *args)] = name

        for _ in range(concurrency):
            start_next()
        while running:
            # Never blocked for long: a signal the kernel gives a worker thread runs evoci's handler only
            # when the main thread wakes (a SIGTERM'd run waited for its task's 35 s test run to end).
            done, _ = wait(running, timeout=0.25, return_when=FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                try:
                    result = future.result()
                except Exception as exc:  # recorded by the subflow; the others went on
                    failed.append((name, exc))
                else:
                    results.append((name, result))
                    reason = stop(result) if stop else None
                    if reason and stopped is None:
                        stopped = reason
                        get_run_logger().error("stopping the run, no further task starts: %s", reason)
                start_next()
    return [r for _, r in sorted(results, key=lambda r: order[r[0]])], failed, stopped



def evolve_unit(spec: TaskSpec, config: RunConfig, dataset: str, home: str | None, db: str) -> tuple[str, str, dict]:
    """A task as a work pool's ``evolve`` flow run takes it: the spec itself, and the worker's own home."""
    return spec.task_id, spec.task_id, {"task": spec.model_dump(mode="json"), "config": config.model_dump(mode="json"),
                                        "dataset": dataset, "home": None, "db": str(db)}


def task_summary(run: RunContext, task_id: str) -> TaskSummary:
    """How a task ended, as its worker recorded it in the results store."""
    from evoci.store import reading

    with reading(run.db, run_id=run.run_id) as con:
        row = con.execute("""select t.status, t.reason, coalesce(max(i.iteration), 0) from tasks t
                             left join iterations i using (run_id, task_id)
                             where t.run_id = ? and t.task_id = ? group by t.status, t.reason""",
                          [run.run_id, task_id]).fetchone()
    if row is None:
        return TaskSummary(run_id=run.run_id, task_id=task_id, status="not_started", reason="no worker recorded it")
    return TaskSummary(run_id=run.run_id, task_id=task_id, status=row[0], reason=row[1], iterations=row[2])


@flow(name="benchmark", flow_run_name="benchmark-{dataset}")
def benchmark(dataset: str = "demo", config: RunConfig = RunConfig(), home: str | None = None,
              db: str | None = None, sandbox_block: str | None = None,
              task_deployment: str | None = None) -> list[TaskSummary]:
    """Evolve every task of ``dataset`` (``demo`` or a JSONL file), ``config.concurrency`` at once.

    ``sandbox_block`` names a saved ``evoci-sandbox`` block that replaces ``config.sandbox``.
    ``task_deployment`` (``evolve/NAME`` on a work pool) runs each task as a flow run of it, on
    whichever worker takes it; ``config.concurrency`` is then how many are queued at once.
    """
    interrupt.reclaim()  # SIGTERM stops this flow's workers at once, as SIGINT does (evoci/interrupt.py)
    with lease.scope():  # the leases this flow takes end with it (or with the command around it)
        log = get_run_logger()
        if sandbox_block:
            from evoci.blocks.sandbox import SandboxBlock

            config = config.model_copy(update={"sandbox": SandboxBlock.load(sandbox_block).config()})
        run = RunContext.create(config, dataset_name(dataset), home=home, db=db)
        data = load_dataset(dataset, run.paths)
        record_run(run, dataset_tasks=len(data.tasks) + len(data.errors), max_iterations=config.max_iterations)
        for error in data.errors:
            log.error("skipped: %s", error)
            run.facts.failure(run.run_id, node="dataset", kind="input", error=error)
        log.info("run %s: evolving %d task(s) of %s, %d at once%s", run.run_id, len(data.tasks), data.name,
                 config.concurrency, f"; {len(data.errors)} bad dataset line(s) skipped" if data.errors else "")
        if task_deployment:
            check_pool(task_deployment, "evolve", run.db)
        each = OnPool(task_deployment, run, evolve_unit, task_summary) if task_deployment else evolve
        summaries, failed, stopped = each_in_subflows(
            each, [(spec.task_id, spec) for spec in data.tasks], config.concurrency, run.config, data.name, run.home,
            run.db, stop=lambda summary: summary.reason if summary.stops_run else None)
        for task_id, exc in failed:
            if is_infrastructure(exc):  # a subflow that could not even start recorded nothing itself
                run.facts.quick().failure(run.run_id, task_id=task_id, node="flow", kind="infrastructure", error=exc)
        run.facts.run_finished(run.run_id)
        publish_run(run)  # summary, task table and plots on the run's page; never raises
        if stopped:
            raise ProviderRejected(stopped)
        if failed:
            listed = "; ".join(f"{task_id}: {str(exc) or type(exc).__name__}" for task_id, exc in failed)
            if all(is_infrastructure(exc) for _, exc in failed):
                raise RuntimeError(f"{len(failed)} task(s) failed for infrastructure reasons: {listed} — retry this flow "
                                   "run, or run the same command again, to redo only what did not complete")
            raise RuntimeError(f"{len(failed)} task(s) failed: {listed} — retrying will not help until the cause is fixed")
        return summaries
