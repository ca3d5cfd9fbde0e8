"""The ``swe_evo`` flow: every instance of a SWE-EVO dataset, agent → test, a few at a time.

Per instance (SWE-EVO, arXiv 2512.18470, §3): **prepare** (repository, base, environment
at the end version) → **agent** (a patch against the base: a baseline, an agent in a
workspace, or a prediction read from a file) → **test** (``evoci.swebench.grade``) →
one iteration-1 fact with the targets' outcomes. Iteration 0 (the base) is not graded:
the records' F2P/P2P sets already say what fails and passes there.

Every instance stays in the run: an instance without a prediction gets an iteration-1 row
with status ``no_prediction`` (scored 0 by ``swe_evo_instances``); one whose retries
ran out is ``infra_error``; a bad record is ``input_error``. Nodes persist their results
under keys of small identities (``tasks/caching.py``), so re-running the same command,
or retrying the flow run, resumes: completed nodes are read back, facts are not written twice.
"""

from __future__ import annotations

import contextvars
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

from prefect import flow
from prefect.logging import get_run_logger
from pydantic import BaseModel

from evoci.domain import AgentConfig, RunConfig
from evoci.errors import InfrastructureError, InputError
from evoci.runtime import RunContext
from evoci.store import IterationRow, TaskRow
from evoci.swe_evo.agents import check_kind
from evoci.swe_evo.datasets import load_evo_dataset
from evoci.swe_evo.failures import judge_unresolved
from evoci.swe_evo.loader import EvoInstance
from evoci.tasks.swe_evo import evo_agent_task, evo_grade_task, evo_prepare_task


class InstanceSummary(BaseModel):
    """How one instance ended (the scores live in ``swe_evo_instances``)."""

    run_id: str
    instance_id: str
    status: str  # done | invalid | input_error | infra_error
    grade: str | None = None  # the grading's status
    reason: str | None = None


@flow(name="swe_evo", flow_run_name="swe-evo-{dataset}")
def swe_evo(dataset: str = "swe-evo-demo", config: RunConfig = RunConfig(protocol="swe-evo"),
            repos: str | None = None, home: str | None = None, db: str | None = None,
            judge: AgentConfig | None = None) -> list[InstanceSummary]:
    """Predict and grade every instance of ``dataset`` (``swe-evo-demo``, a records file or folder).

    ``repos`` is the folder of local clones for records without ``repo_path``. The agent is
    ``config.programmer`` (gold, empty, replay, llm, command, or predictions with option ``path``).
    ``judge`` (an ``llm`` AgentConfig) labels every unresolved instance with the paper's failure
    taxonomy (``failure_labels``, ``swe_evo_failure_modes``).
    """
    log = get_run_logger()
    config = config.model_copy(update={"protocol": "swe-evo"})
    check_kind(config.programmer)
    data, name = load_evo_dataset(dataset, config, repos=repos, home=home)
    run = RunContext.create(config, name, home=home, db=db)
    run.facts.run(run.run_id, protocol="swe-evo", dataset=name, max_iterations=1,
                  config_hash=run.config.config_hash(), config=run.config.model_dump(mode="json"))
    for error in data.errors:
        log.error("skipped: %s", error)
        run.facts.failure(run.run_id, node="dataset", kind="input", error=error)
    log.info("run %s: %d SWE-EVO instance(s) of %s, agent %s, %d at once", run.run_id, len(data.instances), name,
             config.programmer.kind, config.concurrency)
    with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="swe-evo") as pool:
        futures = [pool.submit(contextvars.copy_context().run, evaluate_instance, instance, run)
                   for instance in data.instances]
    summaries, failed = [], []
    for instance, future in zip(data.instances, futures):
        try:
            summaries.append(future.result())
        except Exception as exc:  # recorded as infra_error; the others went on
            failed.append(f"{instance.instance_id}: {exc}")
    if judge is not None:
        judge_unresolved(run, data.instances, judge)
    run.facts.run_finished(run.run_id)
    if failed:
        raise RuntimeError(f"{len(failed)} instance(s) failed for infrastructure reasons (retry this flow run): "
                           + "; ".join(failed))
    return summaries


def evaluate_instance(instance: EvoInstance, run: RunContext) -> InstanceSummary:
    """prepare → agent → test for one instance, recording its facts as they come."""
    log, facts = get_run_logger(), run.facts
    summary = InstanceSummary(run_id=run.run_id, instance_id=instance.instance_id, status="done")
    task = instance.task()
    facts.task(TaskRow(run.run_id, instance.instance_id, "swe-evo", "running", repo=instance.repo,
                       base_ref=instance.base_commit, oracle_ref=instance.end_version_commit,
                       metadata={"start_version": instance.start_version, "end_version": instance.end_version,
                                 "log_parser": instance.log_parser, "record_hash": instance.record_hash,
                                 "repo_path": task.repo}))
    facts.targets(run.run_id, instance.instance_id, {**{t: "P2P" for t in instance.p2p}, **{t: "F2P" for t in instance.f2p}})
    if not instance.f2p:
        reason = "empty FAIL_TO_PASS: nothing can show the release was implemented (flagged invalid, not scored)"
        facts.task_status(run.run_id, instance.instance_id, "invalid", reason)
        return summary.model_copy(update={"status": "invalid", "reason": reason})
    try:
        prepared = evo_prepare_task.with_options(**_options(run))(instance, run)
        facts.task(TaskRow(run.run_id, instance.instance_id, "swe-evo", "running", base_sha=prepared.base_sha,
                           environment_hash=prepared.environment.content_hash))
        started, t0 = _now(), time.monotonic()
        prediction = evo_agent_task.with_options(**_options(run))(prepared, run)
        result = evo_grade_task.with_options(**_options(run))(prepared, run, prediction.patch)
        facts.iteration(IterationRow(
            run_id=run.run_id, task_id=instance.instance_id, iteration=1, status=result.status,
            outcomes=result.outcomes, patch_applied=result.patch_applied, programmer=prediction.outcome,
            tampered_files=result.overridden, started_at=started, finished_at=_now(),
            wall_s=time.monotonic() - t0, test_s=result.duration_s,
        ))
        facts.grading(run.run_id, instance.instance_id, 1, status=result.status, apply_method=result.apply_method,
                      overridden=result.overridden, collisions=result.collisions, exit_code=result.exit_code,
                      output_tail=result.output_tail)
    except InputError as exc:
        log.error("instance %s: %s", instance.instance_id, exc)
        facts.failure(run.run_id, task_id=instance.instance_id, node="prepare", kind="input", error=exc)
        facts.task_status(run.run_id, instance.instance_id, "input_error", str(exc))
        return summary.model_copy(update={"status": "input_error", "reason": str(exc)})
    except InfrastructureError as exc:
        facts.failure(run.run_id, task_id=instance.instance_id, node="flow", kind="infrastructure", error=exc)
        facts.task_status(run.run_id, instance.instance_id, "infra_error", str(exc))
        raise
    facts.task_status(run.run_id, instance.instance_id, "done")
    return summary.model_copy(update={"grade": result.status})


def _options(run: RunContext) -> dict:
    """Persist node results under this run's home (so retries find them), with the run's retry policy."""
    storage = run.paths.results
    storage.mkdir(parents=True, exist_ok=True)
    return dict(result_storage=storage, retries=run.config.node_retries, retry_delay_seconds=run.config.retry_delays_s)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)
