"""The ``nitr`` flow: NITR probes solved step by step, then graded by their evaluators.

Per probe (its own ``nitr-probe`` subflow) and attempt: prepare the workspace → for each
step k, the agent node (TASK k and the code of step k − 1, nothing else) → after the
final step, the grade node (optionally after every step, as a diagnostic). The views
(``nitr_probes``, ``nitr_runs``, ``nitr_by_dimension``, …) turn the recorded facts into
Pass / F / S / B / E. Caching, retries and resume work as in ``evolve``: every node
persists its result under a key of small identities (``tasks/caching.py``).

With ``task_deployment`` (``nitr_probe_by_id/NAME`` on a work pool) each probe is a flow run of
that deployment, which any worker takes (``evoci.deployments.pool``): it is passed as the
source and the probe's id and content hash, and the worker reads the probe from its own copy
(the built-in suite of its installed evoci, or the checkout at the same path).
"""

from __future__ import annotations

import time
from pathlib import Path

from prefect import flow
from prefect.logging import get_run_logger
from pydantic import BaseModel

from evoci import interrupt
from evoci.domain import RunConfig
from evoci.errors import InfrastructureError, InputError
from evoci.deployments.pool import OnPool, check_pool, join_on_worker
from evoci.flows.benchmark import each_in_subflows
from evoci.nitr.evaluator import NitrGrade
from evoci.nitr.loader import NitrProbe
from evoci.nitr.preflight import NitrEnvironmentError
from evoci.nitr.report import publish_nitr_run
from evoci.nitr.recorder import ProbeRecorder
from evoci.nitr.suites import BUILTIN, PROBES, run_dataset_name, selected_suite, suite_root
from evoci.runtime import RunContext
from evoci.store import lease, reading
from evoci.tasks.identity import ended, record_run
from evoci.tasks.nitr import nitr_grade_task, nitr_preflight_task, nitr_prepare_task, nitr_step_task
from evoci.workspace import Workspace


class ProbeSummary(BaseModel):
    """How one probe's run ended; ``category`` is read back from the nitr_probes view."""

    run_id: str
    probe_id: str
    status: str  # done | input_error | infra_error | environment_error
    category: str | None = None
    reason: str | None = None


def _nodes(run: RunContext) -> dict:
    storage = run.paths.results
    storage.mkdir(parents=True, exist_ok=True)
    options = dict(result_storage=storage, retries=run.config.node_retries, retry_delay_seconds=run.config.retry_delays_s)
    return {"preflight": nitr_preflight_task.with_options(**options), "prepare": nitr_prepare_task.with_options(**options), "step": nitr_step_task.with_options(**options),
            "grade": nitr_grade_task.with_options(**options)}


def _category(run: RunContext, probe_id: str) -> str | None:
    with reading(run.db, run_id=run.run_id) as con:
        row = con.execute("select category from nitr_probes where run_id = ? and task_id = ?",
                          [run.run_id, probe_id]).fetchone()
    return row[0] if row else None


@flow(name="nitr-probe", flow_run_name="nitr-{probe.probe_id}", log_prints=True)
def nitr_probe(probe: NitrProbe, config: RunConfig, dataset: str = "nitr", home: str | None = None,
               db: str | None = None) -> ProbeSummary:
    """Every attempt at one probe: its steps, its grade, its facts."""
    with lease.scope():  # the leases this flow takes end with it (or with the command around it)
        return probe_in_run(probe, RunContext.create(config, dataset, home=home, db=db))


def probe_in_run(probe: NitrProbe, run: RunContext) -> ProbeSummary:
    """The body of ``nitr_probe`` (and of ``nitr_probe_by_id`` on a worker)."""
    nodes, recorder = _nodes(run), ProbeRecorder(run, probe)
    record_run(run)  # started by the suite's flow, the run is claimed already (with its probe count)
    recorder.start()
    try:
        nodes["preflight"](probe, run)  # a sandbox that cannot build the probe is the harness's fault
        for attempt in range(run.config.attempts):
            prepared = nodes["prepare"](probe, run, attempt)
            # The run's lease is ours (the suite took it; on a worker, the probe's): a git lock in the attempt's workspace is a killed process's.
            Workspace(Path(prepared.workspace)).clear_stale_locks()
            sha, steps = prepared.start_sha, []
            for step in range(1, probe.steps + 1):
                t0 = time.monotonic()
                result = nodes["step"](prepared, run, step, sha)
                sha = result.sha
                grade: NitrGrade | None = None
                if step == probe.steps or run.config.grade_every_step:
                    grade = nodes["grade"](prepared, run, step, sha)
                steps.append((step, result, grade, time.monotonic() - t0))
            recorder.attempt(attempt, steps)
    except InputError as exc:
        get_run_logger().error("probe %s: %s", probe.probe_id, exc)
        recorder.failure("input", exc, node="step")
        recorder.status("input_error", str(exc))
        return ProbeSummary(run_id=run.run_id, probe_id=probe.probe_id, status="input_error", reason=str(exc))
    except NitrEnvironmentError as exc:
        recorder.failure("environment", exc, node="preflight")
        recorder.status("environment_error", str(exc))
        raise
    except InfrastructureError as exc:
        recorder.failure("infrastructure", exc)
        recorder.status("infra_error", str(exc))
        raise
    except BaseException as exc:  # a signal, or a failure evoci did not foresee: recorded, never left 'running'
        ended(run, probe.probe_id, exc)
        raise
    recorder.status("done")
    category = _category(run, probe.probe_id)
    get_run_logger().info("probe %s (%s, %s): %s", probe.probe_id, probe.dimension, probe.granularity, category)
    return ProbeSummary(run_id=run.run_id, probe_id=probe.probe_id, status="done", category=category)


@flow(name="nitr", flow_run_name="nitr-{source}")
def nitr(source: str = "builtin", config: RunConfig = RunConfig(protocol="nitr"),
         select: dict[str, list[str]] | None = None, home: str | None = None, db: str | None = None,
         task_deployment: str | None = None) -> list[ProbeSummary]:
    """Run every selected probe of ``source`` (``builtin`` or a NITR checkout), ``config.concurrency`` at once.

    ``select`` keeps the probes matching every key: ``id``, ``language``, ``dimension``, ``granularity``.
    ``task_deployment`` (``nitr_probe_by_id/NAME`` on a work pool) runs each probe as a flow run of
    it, on whichever worker takes it; ``config.concurrency`` is then how many are queued at once.
    """
    interrupt.reclaim()  # SIGTERM stops this flow's workers at once, as SIGINT does (evoci/interrupt.py)
    with lease.scope():  # the leases this flow takes end with it (or with the command around it)
        log = get_run_logger()
        config = config.model_copy(update={"protocol": "nitr"})
        suite = selected_suite(source, select)  # nothing to run is an error, before a run is recorded
        dataset = run_dataset_name(source, suite)
        run = RunContext.create(config, dataset, home=home, db=db)
        if task_deployment:
            check_pool(task_deployment, "nitr_probe_by_id", run.db)
        record_run(run, dataset_tasks=len(suite.probes) + len(suite.errors))
        for error in suite.errors:
            log.error("skipped: %s", error)
            run.facts.failure(run.run_id, node="dataset", kind="input", error=error)
        log.info("run %s: %d probe(s) of %s, %d attempt(s) each%s", run.run_id, len(suite.probes), dataset,
                 run.config.attempts, f"; {len(suite.errors)} unusable case(s) skipped" if suite.errors else "")
        each = OnPool(task_deployment, run, probe_unit(source), probe_summary) if task_deployment else nitr_probe
        summaries, failures, _ = each_in_subflows(each, [(p.probe_id, p) for p in suite.probes],
                                                  run.config.concurrency, run.config, dataset, run.home, run.db)
        failed = [f"{name}: {exc}" for name, exc in failures]
        run.facts.run_finished(run.run_id)
        publish_nitr_run(run.db, run.run_id)  # summary and probe table on the run's page; never raises
        if failed:
            raise RuntimeError(f"{len(failed)} probe(s) failed (retry this flow run once the cause is fixed): "
                               + "; ".join(failed))
        return summaries


def probe_unit(source: str):
    """How a probe is queued on a work pool: by source, id and content hash, never by this host's paths."""
    root = suite_root(source)
    portable = BUILTIN if root == PROBES else f"nitr:{root}"  # the built-in suite is wherever the worker installed evoci

    def unit(probe: NitrProbe, config: RunConfig, dataset: str, home: str | None, db: str) -> tuple[str, str, dict]:
        return probe.probe_id, probe.probe_id, {
            "source": portable, "probe_id": probe.probe_id, "content_hash": probe.content_hash,
            "config": config.model_dump(mode="json"), "dataset": dataset, "home": None, "db": str(db)}

    return unit


def probe_summary(run: RunContext, probe_id: str) -> ProbeSummary:
    """How a probe ended, as its worker recorded it in the results store."""
    with reading(run.db, run_id=run.run_id) as con:
        row = con.execute("select status, reason from tasks where run_id = ? and task_id = ?",
                          [run.run_id, probe_id]).fetchone()
    if row is None:
        return ProbeSummary(run_id=run.run_id, probe_id=probe_id, status="not_started", reason="no worker recorded it")
    return ProbeSummary(run_id=run.run_id, probe_id=probe_id, status=row[0], reason=row[1],
                        category=_category(run, probe_id) if row[0] == "done" else None)


@flow(name="nitr_probe_by_id", flow_run_name="nitr-{probe_id}", log_prints=True)
def nitr_probe_by_id(source: str, probe_id: str, content_hash: str, config: RunConfig, dataset: str = "nitr",
                     home: str | None = None, db: str | None = None) -> ProbeSummary:
    """One probe of a NITR run, on the worker that took it (``nitr(task_deployment=…)``).

    The probe is read from ``source`` as this host has it, and must be the probe the run was
    given (``content_hash``). ``config`` carries the run's id, so the facts join that run.
    """
    from evoci.nitr.loader import load_suite

    with lease.scope():  # the leases this flow takes end with it
        probe = next((p for p in load_suite(suite_root(source), {"id": [probe_id]}).probes if p.probe_id == probe_id),
                     None)
        run = join_on_worker(config, dataset, home=home, db=db, key=probe_id, what=f"probe {probe_id}",
                             found=probe and probe.content_hash, expected=content_hash, where=str(suite_root(source)),
                             fix="give every worker the same evoci version, and the checkout at the same path")
        return probe_in_run(probe, run)
