"""What every node of a run needs to know: the run's identity, config and folders."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

from evoci.domain import EnvironmentSpec, RunConfig, SandboxConfig, TaskSpec
from evoci.errors import InputError
from evoci.settings import Paths
from evoci.store import Facts


class RunContext(BaseModel):
    """A run as its nodes see it. Small and serialisable: it is a Prefect parameter."""

    run_id: str
    dataset: str = Field(description="Dataset name or path, for the record.")
    config: RunConfig
    home: str = Field(description="evoci's home folder (results, workspaces, environments).")
    db: str = Field(description="The DuckDB results file.")

    @classmethod
    def create(cls, config: RunConfig, dataset: str, *, home: str | None = None, db: str | None = None) -> "RunContext":
        """The run's identity: ``config.run_id``, else one derived from the dataset and config.

        A derived id gets the flow run's short id when a deployment started the run, so each
        scheduled or triggered run is a new evoci run (a nightly benchmark must not find last
        night's results in its cache), while a retry of that flow run keeps its id and resumes.
        The id is written into the returned ``config``, so subflows given ``run.config`` join this run.
        The agents and sandbox are checked first (``evoci.preflight``), and the id must be a folder name.
        """
        from evoci.names import check_name
        from evoci.preflight import check_run_config

        paths = Paths.of(home)
        config = isolated(check_run_config(config))  # an unknown agent or option never claims a run
        run_id = check_name(config.run_id or config.resolved_run_id(dataset) + _deployment_run_suffix(), "run id")
        return cls(
            run_id=run_id, dataset=dataset, config=config.model_copy(update={"run_id": run_id}),
            home=str(paths.home), db=str(paths.results_db(db)),
        )

    @property
    def paths(self) -> Paths:
        return Paths(home=Path(self.home))

    @property
    def facts(self) -> Facts:
        return Facts(self.db)


def isolated(config: RunConfig) -> RunConfig:
    """``config`` with a sandbox that can isolate its agents here, or an InputError saying what to do.

    The local sandbox needs bubblewrap. Without it, agents that run no model-written code (the
    human replay) fall back to the unisolated ``host`` sandbox — written into the config, so the
    run's record and its reports say so; any other agent is refused.
    """
    if config.sandbox.kind != "local":
        return config
    from evoci.agents.base import TRUSTED_KINDS
    from evoci.sandbox import UNAVAILABLE_HINT, bwrap

    reason = bwrap.available()
    if reason is None:
        return config
    untrusted = sorted({a.kind for a in (config.architect, config.programmer)} - TRUSTED_KINDS)
    if untrusted:
        raise InputError(f"agents of kind {', '.join(untrusted)} need an isolated sandbox, and the local one "
                         f"cannot start here: {reason} — {UNAVAILABLE_HINT}")
    host = SandboxConfig(kind="host", options={**config.sandbox.options, "unisolated_because": reason})
    return config.model_copy(update={"sandbox": host})


def _deployment_run_suffix() -> str:
    """``-<first 8 hex digits of the flow run id>`` inside a flow run created by a deployment, else ``""``."""
    from prefect.context import FlowRunContext

    flow_run = getattr(FlowRunContext.get(), "flow_run", None)
    if flow_run is None or flow_run.deployment_id is None:
        return ""
    return f"-{flow_run.id.hex[:8]}"


class Prepared(BaseModel):
    """A task made ready to evolve: refs resolved, workspace created, environment known."""

    task: TaskSpec
    base_sha: str
    oracle_sha: str
    start_sha: str = Field(description="Workspace commit of iteration 0 (base code + oracle tests).")
    workspace: str
    workspace_id: str = Field(description="Identity of this workspace's creation; part of every node's cache key.")
    oracle_dir: str
    environment: EnvironmentSpec


def inject_fault(home: str, node: str, iteration: int | str) -> None:
    """Fail on purpose when ``EVOCI_INJECT_FAULTS`` asks for it (fault-injection for tests).

    ``EVOCI_INJECT_FAULTS="test@3x2,programmer@1"`` makes the test node of iteration 3
    raise an infrastructure error the first 2 times it runs, and the programmer of
    iteration 1 once; ``programmer-paid@1`` fails the programmer after its agent ran (its calls are
    paid). Counts persist under the home folder, so they span processes.
    """
    spec = os.environ.get("EVOCI_INJECT_FAULTS", "")
    for item in filter(None, (s.strip() for s in spec.split(","))):
        where, _, times = item.partition("x")
        if where != f"{node}@{iteration}":
            continue
        counter = Path(home) / "faults" / where
        counter.parent.mkdir(parents=True, exist_ok=True)
        done = int(counter.read_text()) if counter.exists() else 0
        if done < int(times or 1):
            counter.write_text(str(done + 1))
            from evoci.errors import SandboxError

            raise SandboxError(f"injected fault {where} ({done + 1} of {times or 1}) — EVOCI_INJECT_FAULTS is set")
