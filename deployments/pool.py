"""One unit of a run as a flow run of a work pool's deployment, watched until it ends, and resubmitted if its worker is lost.

A unit is what a protocol's run fans out: a SWE-CI task (``evolve``), a SWE-EVO instance
(``swe_evo_instance``), a NITR probe (``nitr_probe_by_id``), a SWE-Bench-CL sequence
(``continual_sequence``). ``OnPool`` queues it with parameters a worker on another host can
resolve (ids and content hashes, ``home: None``), waits (``run_watched``), and reads how it
ended from the results store, which every worker writes (PostgreSQL). Below, "task" is the unit
and "the task's lease" the lease its flow takes for (run, unit) in the store.

A worker that dies with its flow run (``kill -9``, a host that goes down) leaves the flow run
``Running`` in Prefect for ever: nothing on the server notices. The task's lease does: the
``evolve`` flow on the worker holds the lease of its (run, task) in the results store and renews
it every sixth of ``EVOCI_LEASE_TTL_S`` (``evoci.store.lease``). So while the flow run is
pending or running, the caller polls the lease:

- held and renewed: the worker is alive, keep waiting (however long the task takes);
- taken by this flow run (another owner than the lease held when it was queued) and expired:
  the worker is gone. So is one that never took the lease within ``EVOCI_POOL_START_GRACE_S``
  (600 s) of the flow run being pending or running: a worker lost while it started the flow run.
  The flow run is set ``Crashed`` (a message says why) and a new flow run of the same task is
  queued, which any worker takes (the restarted one, or another). Its lease is free (expired),
  its nodes' facts are written with the same keys (a fact written twice is one row), and a worker
  with the dead one's home resumes from its cached nodes.

A process that cannot renew stops writing before its lease may be taken (``LeaseLost``), so the
old and the new flow run never write at once. After ``MAX_RESUBMITS`` lost workers the task
fails as an infrastructure error. A flow run that nobody has taken yet (``Scheduled``: no worker
polls the pool) is waited for: that is a missing worker, not a lost one.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from evoci.settings import lease_ttl_s, location

if TYPE_CHECKING:
    from evoci.runtime import RunContext

MAX_RESUBMITS = 3
POLL_S = 5.0
# A flow run's process may take long to start on a loaded host (imports, a sandbox image): only a
# flow run that has not taken its lease for this long is taken for lost.
START_GRACE_S = 600.0


def poll_s() -> float:
    """Seconds between looks at a queued task (``EVOCI_POOL_POLL_S``, default 5)."""
    return float(os.environ.get("EVOCI_POOL_POLL_S", POLL_S))


def start_grace_s() -> float:
    """Seconds a pending or running flow run may go without taking its lease (``EVOCI_POOL_START_GRACE_S``)."""
    return float(os.environ.get("EVOCI_POOL_START_GRACE_S", START_GRACE_S))


@dataclass
class Watched:
    """The last flow run of a task and how many times it was queued again."""

    flow_run: Any
    resubmitted: int = 0


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def lease_of(db: Any, run_id: str, task_id: str) -> tuple[str, datetime] | None:
    """The task lease's owner and when it expires (naive UTC, as the store keeps it); None if nobody holds it."""
    from evoci.store.db import transaction

    with transaction(db, wait_s=30) as con:
        row = con.execute("select owner, expires_at from leases where run_id = ? and task_id = ?",
                          [run_id, task_id]).fetchone()
    return (row[0], row[1]) if row else None


def lost_because(state: Any, expires: datetime | None, seen_at: datetime | None, *, ttl_s: float, grace_s: float,
                 now: datetime) -> str | None:
    """Why a pending or running flow run's worker is taken for lost, or None while it may be alive.

    ``expires``: when the lease this flow run took expires (None: it holds none); ``seen_at``:
    when the caller last saw it held (None: never).
    """
    if expires is not None:
        if expires < now:
            return f"the task's lease expired {(now - expires).total_seconds():.0f} s ago (no renewal from its worker)"
        return None
    if seen_at is not None:  # released: the flow run is ending, and its final state follows at once
        if (now - seen_at).total_seconds() > 2 * ttl_s:
            return f"it released the task's lease {(now - seen_at).total_seconds():.0f} s ago and never ended"
        return None
    since = getattr(state, "timestamp", None)
    if since is None:
        return None
    started = since.astimezone(timezone.utc).replace(tzinfo=None) if since.tzinfo else since
    if (now - started).total_seconds() > grace_s:
        return f"its worker never took the task's lease in {grace_s:.0f} s of the flow run being {state.name}"
    return None


def run_watched(deployment: str, name: str, parameters: dict[str, Any], *, db: Any, run_id: str, task_id: str,
                log: logging.Logger | logging.LoggerAdapter, sleep: Callable[[float], None] = time.sleep) -> Watched:
    """Queue ``deployment`` for one task and wait for its final state, resubmitting it when its worker is lost."""
    from prefect import get_client
    from prefect.deployments import run_deployment
    from prefect.states import Crashed

    def submit(attempt: int) -> Any:
        # The first keeps Prefect's own key (a retried parent finds its flow run); a resubmission needs a new one.
        again = {"flow_run_name": f"{name}-again-{attempt}", "idempotency_key": uuid.uuid4().hex} if attempt else {}
        return run_deployment(deployment, timeout=0, as_subflow=True, parameters=parameters,
                              **{"flow_run_name": name, **again})

    before = (lease_of(db, run_id, task_id) or (None,))[0]  # a lease an earlier process left is not this flow run's
    watched = Watched(submit(0))
    seen_at: datetime | None = None
    with get_client(sync_client=True) as client:
        while True:
            flow_run = client.read_flow_run(watched.flow_run.id)
            state = flow_run.state
            if state is None or state.is_final():
                watched.flow_run = flow_run
                return watched
            if not (state.is_running() or state.is_pending()):
                sleep(poll_s())  # scheduled: no worker took it yet
                continue
            held, now = lease_of(db, run_id, task_id), _now()
            expires = held[1] if held and held[0] != before else None
            seen_at = now if expires is not None else seen_at
            why = lost_because(state, expires, seen_at, ttl_s=lease_ttl_s(), grace_s=start_grace_s(), now=now)
            if why is None:
                sleep(poll_s())
                continue
            if watched.resubmitted >= MAX_RESUBMITS:
                client.set_flow_run_state(flow_run.id, Crashed(message=f"evoci: its worker was lost: {why}"),
                                          force=True)
                watched.flow_run = client.read_flow_run(flow_run.id)
                return watched
            client.set_flow_run_state(flow_run.id, Crashed(
                message=f"evoci: its worker was lost ({why}); the task was queued again"), force=True)
            watched.resubmitted += 1
            before = held[0] if held else None
            log.warning("task %s: flow run %s lost its worker (%s); queued again (%d of %d)", task_id, flow_run.name,
                        why, watched.resubmitted, MAX_RESUBMITS)
            watched.flow_run, seen_at = submit(watched.resubmitted), None
            sleep(poll_s())


def absolute(path: str | None) -> str | None:
    """A path the caller gave, made absolute for a unit's parameters (a worker has no caller's cwd)."""
    return str(Path(path).absolute()) if path else None


def check_pool(deployment: str, flow_name: str, db: Any) -> None:
    """Refuse, before anything is queued, a deployment of another flow or a store only this host can write."""
    from evoci.errors import InputError

    if deployment.partition("/")[0] != flow_name or not deployment.partition("/")[2]:
        raise InputError(f"this protocol runs its units on a deployment of the {flow_name!r} flow: give "
                         f"--task-deployment {flow_name}/NAME (`evoci deploy` registers {flow_name}/pool), not {deployment!r}")
    if isinstance(location(db), Path):
        raise InputError(f"tasks on a work pool need a results store every worker writes: give --store "
                         f"postgresql://… (not the file {db})")


def join_on_worker(config: Any, dataset: str, *, home: str | None, db: str | None, key: str, what: str,
                   found: str | None, expected: str, where: str, fix: str) -> "RunContext":
    """On the worker that took a unit: the run it joins, with the unit's lease (``key``) held.

    ``found`` is the content hash of the unit as this host reads it (None: not there), which
    must be the run's (``expected``); otherwise this host's copy is not the run's, a deployment
    fault (never the agent's), raised before anything is written.
    """
    from evoci.errors import InfrastructureError
    from evoci.runtime import RunContext
    from evoci.store import lease

    if found != expected:
        raise InfrastructureError(f"{what} is {'not in' if found is None else 'another version in'} {where} as this "
                                  f"worker reads it — {fix}")
    run = RunContext.create(config, dataset, home=home, db=db)
    lease.acquire(run.db, run.run_id, key)  # one writer per unit; the run's process watches this lease
    return run


class OnPool:
    """One unit as a flow run of a work pool's deployment; its summary read back from the results store.

    ``unit(item, *args)`` gives the unit's id, the lease key its flow takes and the flow run's
    parameters; ``summary(run, unit_id)`` reads how the unit ended. Called as a subflow is
    (``each_in_subflows``), it returns that summary or raises when the flow run did not complete.
    """

    def __init__(self, deployment: str, run: "RunContext", unit: Callable[..., tuple[str, str, dict[str, Any]]],
                 summary: Callable[["RunContext", str], Any]):
        self.flow_name = deployment.partition("/")[0]
        self.name, self.deployment, self.run, self.unit, self.summary = (f"{self.flow_name}-on-pool", deployment, run,
                                                                         unit, summary)

    def __call__(self, item: Any, *args: Any) -> Any:
        from prefect.logging import get_run_logger

        from evoci.errors import InfrastructureError

        unit_id, key, parameters = self.unit(item, *args)
        # The worker's own home (EVOCI_HOME) holds the workspace: homes are per host. A worker lost
        # mid-unit (its lease expired) gets the unit queued again (run_watched).
        watched = run_watched(self.deployment, f"{self.flow_name}-{unit_id}", parameters, db=self.run.db,
                              run_id=self.run.run_id, task_id=key, log=get_run_logger())
        state = watched.flow_run.state
        summary = self.summary(self.run, unit_id)
        if state is not None and state.is_crashed():  # its worker was lost every time it was queued
            raise InfrastructureError(f"flow run {watched.flow_run.name} of {self.deployment} ended Crashed: "
                                      f"{state.message or 'see its logs'} — start a worker, then run the same "
                                      "command again to resume")
        if state is None or not state.is_completed():
            why = getattr(summary, "reason", None) or (state.message if state else None) or "see its logs"
            raise RuntimeError(f"flow run {watched.flow_run.name} of {self.deployment} ended "
                               f"{state.name if state else 'without a state'}: {why}")
        return summary


__all__ = ["MAX_RESUBMITS", "OnPool", "Watched", "check_pool", "join_on_worker", "lease_of", "lost_because", "run_watched",
           "start_grace_s"]
