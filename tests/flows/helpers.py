"""Reading what a flow run did: its task runs' states, and the results database."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

import duckdb
from prefect import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, FlowRunFilterName
from prefect.client.schemas.sorting import FlowRunSort


def node_states(flow_run_id: UUID | str) -> dict[str, str]:
    """Task run name → final state name (``Cached`` = read back, ``Completed`` = executed)."""
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(str(flow_run_id))])))
    return {run.name: run.state.name for run in runs if run.state}


def flow_runs_named(name: str) -> list:
    """Flow runs with this name, oldest first."""
    with get_client(sync_client=True) as client:
        return client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[name])),
                                     sort=FlowRunSort.EXPECTED_START_TIME_ASC)


def query(db: Path, sql: str, params: list | None = None) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def fail_first_write(monkeypatch, path: str) -> None:
    """The local sandbox's first write of ``path`` fails as infrastructure would (the volume went away)."""
    from evoci.errors import SandboxError
    from evoci.sandbox.local import LocalSandbox

    original, failed = LocalSandbox.write_file, []

    def flaky_write(self, target, content):
        if target == path and not failed:
            failed.append(target)
            raise SandboxError("workspace volume went away")
        return original(self, target, content)

    monkeypatch.setattr(LocalSandbox, "write_file", flaky_write)


def with_usage(solver, usage: dict, served: list):
    """``solver``'s replies with ``usage`` on each; ``served`` gets the wire protocol of every reply."""

    def script(wire: str, request: dict):
        spec = dict(solver(wire, request))
        spec["usage"] = usage
        served.append(wire)
        return spec

    return script
