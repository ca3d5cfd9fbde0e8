"""The ``swe_evo`` flow: every instance of a SWE-EVO dataset, agent → test, a few at a time.

Per instance (SWE-EVO, arXiv 2512.18470, §3): **prepare** (repository, base, environment
spec) → **validate** (the environment proven on the clean base + test_patch,
``evoci.swebench.validate``) → **agent** (a patch against the base: a baseline, an agent in a
workspace, or a prediction read from a file) → **test** (``evoci.swebench.grade``) →
one iteration-1 fact with the targets' outcomes. Iteration 0 (the base) is not graded:
the records' F2P/P2P sets already say what fails and passes there. An optional **judge**
labels the unresolved instances with the paper's failure taxonomy.

Every instance stays in the run: an instance without a prediction gets an iteration-1 row
with status ``no_prediction`` (scored 0 by ``swe_evo_instances``); one whose retries
ran out is ``infra_error``; a bad record is ``input_error``; one whose environment could not be
built or proven is ``environment_error`` (unscored, re-validated when the run is re-run). Nodes persist their results
under keys of small identities (``tasks/caching.py``), so re-running the same command,
or retrying the flow run, resumes: completed nodes are read back, facts are not written twice.

With ``task_deployment`` (``swe_evo_instance/NAME`` on a work pool) each instance is a flow run
of that deployment, which any worker takes (``evoci.deployments.pool``): it is passed by
identity (the dataset as given, the instance id and its record's hash), and the worker reads
the dataset where its own host has it (``swe-evo-demo`` is built in the worker's home).
"""

from __future__ import annotations

import contextvars
import time
from concurrent.futures import ThreadPoolExecutor

from prefect import flow
from prefect.logging import get_run_logger
from pydantic import BaseModel

from evoci import interrupt
from evoci.domain import AgentConfig, RunConfig
from evoci.errors import EnvironmentBuildError, EnvironmentInvalid, InfrastructureError, InputError
from evoci.deployments.pool import OnPool, absolute, check_pool, join_on_worker
from evoci.flows.benchmark import each_in_subflows
from evoci.runtime import RunContext
from evoci.store import lease, reading
from evoci.swe_evo.agents import resolve_agent
from evoci.swe_evo.datasets import DEMO, load_evo_dataset
from evoci.swe_evo.failures import judge_unresolved
from evoci.swe_evo.loader import EvoInstance
from evoci.swe_evo.record import EvoRecorder, now
from evoci.tasks.identity import ended, record_run
from evoci.tasks.swe_evo import evo_agent_task, evo_grade_task, evo_prepare_task, evo_validate_task, node_options


class InstanceSummary(BaseModel):
    """How one instance ended (the scores live in ``swe_evo_instances``)."""

    run_id: str
    instance_id: str
    status: str  # done | invalid | input_error | environment_error | infra_error
    grade: str | None = None  # the grading's status
    reason: str | None = None


@flow(name="swe_evo", flow_run_name="swe-evo-{dataset}")
def swe_evo(dataset: str = "swe-evo-demo", config: RunConfig = RunConfig(protocol="swe-evo"),
            repos: str | None = None, home: str | None = None, db: str | None = None,
            judge: AgentConfig | None = None, environments: str | None = None,
            task_deployment: str | None = None) -> list[InstanceSummary]:
    """Predict and grade every instance of ``dataset`` (``swe-evo-demo``, a records file or folder).

    ``repos`` is the folder of local clones for records without ``repo_path``. The agent is
    ``config.programmer`` (gold, empty, replay, llm, command, or predictions with option ``path``).
    ``judge`` (an ``llm`` AgentConfig) labels every unresolved instance with the paper's failure
    taxonomy (``failure_labels``, ``swe_evo_failure_modes``). ``environments`` is a side file of
    environment specs (``evoci.swebench.specs``) adding to or overriding the shipped ones.
    ``task_deployment`` (``swe_evo_instance/NAME`` on a work pool) runs each instance as a flow run
    of it, on whichever worker takes it; ``config.concurrency`` is then how many are queued at once.
    """
    interrupt.reclaim()  # SIGTERM stops this flow's workers at once, as SIGINT does (evoci/interrupt.py)
    with lease.scope():  # the leases this flow takes end with it (or with the command around it)
        log = get_run_logger()
        config = config.model_copy(update={"protocol": "swe-evo", "programmer": resolve_agent(config.programmer)})
        data, name = load_evo_dataset(dataset, config, repos=repos, home=home, environments=environments)
        run = RunContext.create(config, name, home=home, db=db)
        if task_deployment:
            check_pool(task_deployment, "swe_evo_instance", run.db)
        recorder = EvoRecorder(run)
        recorder.run_started(len(data.instances), data.errors)
        for error in data.errors:
            log.error("skipped: %s", error)
        log.info("run %s: %d SWE-EVO instance(s) of %s, agent %s, %d at once", run.run_id, len(data.instances), name,
                 config.programmer.kind, config.concurrency)
        if task_deployment:
            summaries, failed = _on_pool(task_deployment, run, data.instances, dataset, repos, environments)
        else:
            with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="swe-evo") as pool:
                futures = [pool.submit(contextvars.copy_context().run, evaluate_instance, instance, run, recorder)
                           for instance in data.instances]
            summaries, failed = [], []
            for instance, future in zip(data.instances, futures):
                try:
                    summaries.append(future.result())
                except Exception as exc:  # recorded as infra_error; the others went on
                    failed.append(f"{instance.instance_id}: {exc}")
        if judge is not None:
            judge_unresolved(run, data.instances, judge)
        recorder.run_finished()
        if failed:
            raise RuntimeError(f"{len(failed)} instance(s) failed for infrastructure reasons (retry this flow run): "
                               + "; ".join(failed))
        return summaries


def evaluate_instance(instance: EvoInstance, run: RunContext, recorder: EvoRecorder) -> InstanceSummary:
    """prepare → agent → test for one instance."""
    summary = InstanceSummary(run_id=run.run_id, instance_id=instance.instance_id, status="done")
    recorder.instance_started(instance)
    if not instance.f2p:
        reason = "empty FAIL_TO_PASS: nothing can show the release was implemented (flagged invalid, not scored)"
        recorder.ended(instance, "invalid", reason)
        return summary.model_copy(update={"status": "invalid", "reason": reason})
    options = node_options(run)
    try:
        prepared = evo_prepare_task.with_options(**options)(instance, run)
        recorder.prepared(instance, prepared.base_sha, prepared.environment.content_hash)
        try:  # the environment is proven before any agent is graded in it; never retried blindly
            evo_validate_task.with_options(**{**options, "retries": 0})(prepared, run)
        except (EnvironmentInvalid, EnvironmentBuildError) as exc:
            get_run_logger().error("instance %s: environment_error — %s", instance.instance_id, exc)
            recorder.ended(instance, "environment_error", str(exc), exc)
            return summary.model_copy(update={"status": "environment_error", "reason": str(exc)})
        started, t0 = now(), time.monotonic()
        prediction = evo_agent_task.with_options(**options)(prepared, run)
        grade = evo_grade_task.with_options(**options)(prepared, run, prediction.patch)
        recorder.graded(instance, prediction, grade, started, time.monotonic() - t0)
    except InputError as exc:
        get_run_logger().error("instance %s: %s", instance.instance_id, exc)
        recorder.ended(instance, "input_error", str(exc), exc)
        return summary.model_copy(update={"status": "input_error", "reason": str(exc)})
    except InfrastructureError as exc:  # retries exhausted: never scored; the flow run fails so it can be retried
        recorder.ended(instance, "infra_error", str(exc), exc)
        raise
    except BaseException as exc:  # a signal, or a failure evoci did not foresee: recorded, never left 'running'
        ended(run, instance.instance_id, exc)
        raise
    return summary.model_copy(update={"grade": grade.status})


def _on_pool(deployment: str, run: RunContext, instances: list[EvoInstance], dataset: str, repos: str | None,
             environments: str | None) -> tuple[list[InstanceSummary], list[str]]:
    """Every instance as a flow run of ``deployment``; (summaries of those that completed, 'id: why' of the others)."""
    source = dataset if dataset == DEMO else absolute(dataset)

    def unit(instance: EvoInstance) -> tuple[str, str, dict]:
        return instance.instance_id, instance.instance_id, {
            "dataset": source, "instance_id": instance.instance_id, "record_hash": instance.record_hash,
            "config": run.config.model_dump(mode="json"), "run_dataset": run.dataset, "repos": absolute(repos),
            "environments": absolute(environments), "home": None, "db": str(run.db)}

    summaries, failures, _ = each_in_subflows(OnPool(deployment, run, unit, instance_summary),
                                              [(i.instance_id, i) for i in instances], run.config.concurrency)
    return summaries, [f"{name}: {exc}" for name, exc in failures]


def instance_summary(run: RunContext, instance_id: str) -> InstanceSummary:
    """How an instance ended, as its worker recorded it in the results store."""
    with reading(run.db, run_id=run.run_id) as con:
        row = con.execute("""select t.status, t.reason, i.status from tasks t
                             left join iterations i on i.run_id = t.run_id and i.task_id = t.task_id and i.iteration = 1
                             where t.run_id = ? and t.task_id = ?""", [run.run_id, instance_id]).fetchone()
    if row is None:
        return InstanceSummary(run_id=run.run_id, instance_id=instance_id, status="not_started",
                               reason="no worker recorded it")
    return InstanceSummary(run_id=run.run_id, instance_id=instance_id, status=row[0], reason=row[1], grade=row[2])


@flow(name="swe_evo_instance", flow_run_name="swe-evo-{instance_id}")
def swe_evo_instance(dataset: str, instance_id: str, record_hash: str, config: RunConfig, run_dataset: str,
                     repos: str | None = None, environments: str | None = None, home: str | None = None,
                     db: str | None = None) -> InstanceSummary:
    """One instance of a SWE-EVO run, on the worker that took it (``swe_evo(task_deployment=…)``).

    ``dataset``, ``repos`` and ``environments`` are read as this host has them; the instance must
    be the record the run was given (``record_hash``). ``config`` carries the run's id and
    ``run_dataset`` its name, so the facts join the run that queued it.
    """
    with lease.scope():  # the leases this flow takes end with it
        data, _ = load_evo_dataset(dataset, config, repos=repos, home=home, environments=environments)
        instance = next((i for i in data.instances if i.instance_id == instance_id), None)
        run = join_on_worker(config, run_dataset, home=home, db=db, key=instance_id, what=f"instance {instance_id}",
                             found=instance and instance.record_hash, expected=record_hash, where=dataset,
                             fix="give every worker the same dataset (and --repos) at the same path")
        record_run(run, max_iterations=1)
        return evaluate_instance(instance, run, EvoRecorder(run))
