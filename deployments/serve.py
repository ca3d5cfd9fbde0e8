"""Deployments of the ``benchmark``, ``evolve``, ``swe_evo`` and ``nitr`` flows, served by one process.

Route chosen: ``flow.to_deployment(...)`` + ``prefect.serve(...)`` (what ``evoci serve``
runs). One process registers the deployments with the Prefect server, polls it for
scheduled, triggered and retried runs, and runs each in a subprocess — no work pool or
worker to set up, and it works offline against a local ``prefect server start``.
The ``prefect.yaml`` next to this file is the work-pool route (``prefect deploy`` +
``prefect worker start``) for machines where workers are the norm.

Entrypoints are module paths (``evoci.flows.benchmark.benchmark``), so the runs load the
installed package from any working directory.

- ``benchmark/nightly``: the whole dataset, on a cron schedule (default 02:00 every day).
- ``evolve/on-demand``: one task, no schedule; give the task when triggering it.
- ``swe_evo/on-demand``: a SWE-EVO dataset (default the built-in ``swe-evo-demo`` with the
  gold baseline), no schedule; give ``dataset``, ``repos`` and the agent in ``config.programmer``.
- ``nitr/on-demand``: NITR probes (``source``: ``builtin`` or ``nitr:<checkout>``; ``select``),
  no schedule. Serving a NITR source (``evoci serve nitr`` or ``nitr:<path>``) schedules this
  one instead (``nitr/nightly``), and the benchmark deployment keeps the demo, unscheduled.
- ``continual/on-demand``: SWE-Bench-CL sequences (default the built-in ``swe-bench-cl-demo``
  with the gold baseline, matrix ``full``), no schedule; give ``dataset``, ``repos``,
  ``matrix``, ``attempts``, ``memory`` and the agent in ``config.programmer``.
- ``swe_evo_instance/on-demand``, ``nitr_probe_by_id/on-demand``, ``continual_sequence/on-demand``:
  one unit of a run (a SWE-EVO instance, a NITR probe, a SWE-Bench-CL sequence), queued by the
  run's own flow when it is given ``task_deployment`` (``evoci run … --task-deployment``), as
  ``evolve`` is for a SWE-CI task; on a work pool (``deploy_to_pool``) any worker takes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evoci.domain import AgentConfig, RunConfig
from evoci.settings import Paths, location

NIGHTLY = "0 2 * * *"
BENCHMARK = "benchmark/nightly"
EVOLVE = "evolve/on-demand"
SWE_EVO = "swe_evo/on-demand"
NITR = "nitr/on-demand"
CONTINUAL = "continual/on-demand"


def default_parameters(*, dataset: str = "demo", config: RunConfig | None = None, home: str | None = None,
                       db: str | None = None) -> dict[str, Any]:
    """The benchmark deployment's parameters, with absolute paths (runs start in other folders)."""
    paths = Paths(home=Path(home).absolute()) if home else Paths.default()
    if dataset != "demo":
        dataset = str(Path(dataset).absolute())
    return {
        "dataset": dataset,
        "config": (config or RunConfig()).model_dump(mode="json"),
        "home": str(paths.home),
        "db": str(location(db) if db else paths.db),
    }


def build_deployments(*, dataset: str = "demo", config: RunConfig | None = None, cron: str | None = NIGHTLY,
                      timezone: str | None = None, home: str | None = None, db: str | None = None,
                      name: str | None = None) -> list:
    """The RunnerDeployments (benchmark, evolve, swe_evo, nitr, continual, and the units of the last three); ``cron=None`` leaves the benchmark unscheduled (trigger it by hand).

    ``name`` names all four (``benchmark/NAME``, ``evolve/NAME``, ``swe_evo/NAME``, ``nitr/NAME``) instead of ``nightly`` and ``on-demand``,
    so several ``evoci serve`` processes (other datasets, homes or schedules) can share one server.
    """
    from prefect.client.schemas.schedules import CronSchedule
    from prefect.types.entrypoint import EntrypointType

    from evoci.flows.benchmark import benchmark
    from evoci.flows.evolve import evolve
    from evoci.flows.continual import continual, continual_sequence
    from evoci.flows.swe_evo import swe_evo, swe_evo_instance

    from evoci.flows.nitr import nitr, nitr_probe_by_id
    from evoci.nitr.suites import is_nitr_source

    nitr_source = dataset if is_nitr_source(dataset) else "builtin"
    if nitr_source != "builtin" and nitr_source != "nitr":
        nitr_source = f"nitr:{Path(nitr_source.split(':', 1)[1]).absolute()}"
    nitr_cron = cron if is_nitr_source(dataset) else None
    if nitr_cron:
        dataset, cron = "demo", None
    parameters = default_parameters(dataset=dataset, config=config, home=home, db=db)
    nitr_config = (config or RunConfig()).model_copy(update={"protocol": "nitr"})
    probes = nitr.to_deployment(
        name=name or ("nightly" if nitr_cron else NITR.split("/")[1]), tags=["evoci", "nitr"],
        schedules=[CronSchedule(cron=nitr_cron, timezone=timezone)] if nitr_cron else None,
        parameters={"source": nitr_source, "config": nitr_config.model_dump(mode="json"), "select": None,
                    "home": parameters["home"], "db": parameters["db"]},
        description=f"NITR probes of {nitr_source} (select by id, language, dimension, granularity); "
                    f"scheduled {nitr_cron or 'never (trigger by hand)'}.",
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    schedules = [CronSchedule(cron=cron, timezone=timezone)] if cron else None
    nightly = benchmark.to_deployment(
        name=name or BENCHMARK.split("/")[1], schedules=schedules, parameters=parameters, tags=["evoci"],
        description=f"Evolve every task of the dataset ({dataset}); scheduled {cron or 'never (trigger by hand)'}.",
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    on_demand = evolve.to_deployment(
        name=name or EVOLVE.split("/")[1], tags=["evoci"],
        parameters={k: v for k, v in parameters.items() if k != "dataset"},
        description="Evolve one task (give `task`: task_id, repo, base_ref, oracle_ref).",
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    evo_config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="gold"))
    evo = swe_evo.to_deployment(
        name=name or SWE_EVO.split("/")[1], tags=["evoci"],
        parameters={"dataset": "swe-evo-demo", "config": evo_config.model_dump(mode="json"),
                    "home": parameters["home"], "db": parameters["db"]},
        description="Grade a SWE-EVO dataset (records file or folder, `repos` = local clones); agent = config.programmer.",
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    cl_config = RunConfig(protocol="swe-bench-cl", programmer=AgentConfig(kind="gold"))
    cl = continual.to_deployment(
        name=name or CONTINUAL.split("/")[1], tags=["evoci"],
        parameters={"dataset": "swe-bench-cl-demo", "config": cl_config.model_dump(mode="json"), "matrix": "full",
                    "home": parameters["home"], "db": parameters["db"]},
        description="Run SWE-Bench-CL sequences (curriculum JSON, `repos` = local clones) with memory on or off; "
                    "agent = config.programmer.",
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
    # One unit of a run each, queued by the run's flow (`--task-deployment FLOW/NAME`) with every other parameter.
    units = [unit.to_deployment(name=name or EVOLVE.split("/")[1], tags=["evoci"],
                                parameters={"home": parameters["home"], "db": parameters["db"]},
                                description=f"One {what} of a run, queued by the run's flow (evoci run … --task-deployment "
                                            f"{unit.name}/NAME); not for triggering by hand.",
                                entrypoint_type=EntrypointType.MODULE_PATH)
             for unit, what in ((swe_evo_instance, "SWE-EVO instance"), (nitr_probe_by_id, "NITR probe"),
                                (continual_sequence, "SWE-Bench-CL sequence"))]
    return [nightly, on_demand, evo, probes, cl, *units]


def deploy_to_pool(pool: str, *, store: str, name: str = "pool", **options: Any) -> list[str]:
    """Register the deployments on the ``process`` work pool ``pool`` (created if missing); return their names.

    Their runs are taken by ``prefect worker start --pool POOL`` on any host. ``home`` is left to
    each worker (its ``EVOCI_HOME``): workspaces and environments are per host; ``store`` (the
    PostgreSQL results store every worker writes) is a parameter of every deployment.
    """
    from prefect import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.exceptions import ObjectAlreadyExists

    with get_client(sync_client=True) as client:
        try:
            client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
        except ObjectAlreadyExists:
            pass
    names = []
    for deployment in build_deployments(cron=None, db=store, name=name, **options):
        if "home" in deployment.parameters:
            deployment.parameters["home"] = None
        deployment.apply(work_pool_name=pool)
        names.append(f"{deployment.flow_name}/{deployment.name}")
    return names


def serve_deployments(*, limit: int | None = None, poll_seconds: float | None = None, **options: Any) -> None:
    """Register the deployments and run their flow runs until interrupted (Ctrl-C / SIGTERM).

    On shutdown ``prefect.serve`` pauses the deployments' schedules; serving again resumes them.
    Stop this process before the Prefect server, or it waits for the server on its way out.
    """
    from prefect import serve

    kwargs: dict[str, Any] = {"limit": limit}
    if poll_seconds is not None:
        kwargs["query_seconds"] = poll_seconds
    serve(*build_deployments(**options), **kwargs)
