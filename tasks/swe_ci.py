"""SWE-CI's nodes as a run uses them: shared by the ``evolve`` flow and the ``curate`` flow.

Both flows prepare a task, run the oracle's tests (rebuilding the environment while they miss a
module) and count the target tests a report passes; keeping one copy means a curated pair is
checked exactly as the evolution of that pair would start.
"""

from __future__ import annotations

from pathlib import Path

from prefect.logging import get_run_logger

from evoci.domain import TestReport
from evoci.runtime import Prepared, RunContext
from evoci.sandbox.repair import own_packages, repair_step
from evoci.tasks.agents import architect_task, programmer_task
from evoci.tasks.identity import claim_task
from evoci.tasks.prepare import prepare_task
from evoci.tasks.quality import quality_task
from evoci.tasks.test import ORACLE, test_task


def run_nodes(run: RunContext) -> dict:
    """The node tasks, persisting results under this run's home (so retries find them)."""
    storage = run.paths.results
    storage.mkdir(parents=True, exist_ok=True)
    options = dict(result_storage=storage, retries=run.config.node_retries,
                   retry_delay_seconds=run.config.retry_delays_s)
    return {
        "prepare": prepare_task.with_options(**options),
        "test": test_task.with_options(**options),
        "architect": architect_task.with_options(**options),
        "programmer": programmer_task.with_options(**options),
        "claim": claim_task.with_options(retries=run.config.node_retries, retry_delay_seconds=run.config.retry_delays_s),
        "quality": quality_task.with_options(**options),
    }


def oracle_with_repairs(nodes: dict, prepared: Prepared, run: RunContext) -> tuple[TestReport, Prepared]:
    """Run the oracle's tests; while they miss a module, add its distribution and rebuild.

    SWE-CI's curation step 3, bounded by ``max_repairs``; each round is recorded in
    ``environment_repairs``. Deterministic, so a resumed run repeats it from the cache.
    """
    report: TestReport = nodes["test"](prepared, run, ORACLE, prepared.oracle_sha)
    own = own_packages(Path(prepared.oracle_dir))
    for attempt in range(1, run.config.max_repairs + 1):
        spec, records = repair_step(prepared.environment, report, attempt, exclude=own)
        if not records:
            break
        get_run_logger().info("task %s: the oracle's tests miss %s — adding %s and rebuilding the environment",
                              prepared.task.task_id, ", ".join(r.module for r in records),
                              ", ".join(r.distribution for r in records))
        run.facts.repairs(run.run_id, prepared.task.task_id, records, spec.content_hash)
        prepared = prepared.model_copy(update={"environment": spec})
        report = nodes["test"](prepared, run, ORACLE, prepared.oracle_sha)
    return report, prepared


def passed_targets(report: TestReport, targets: list[str]) -> int:
    """How many of ``targets`` passed in ``report`` (n(c) of SWE-CI)."""
    return sum(1 for o in report.outcomes_for(targets).values() if o == "passed")
