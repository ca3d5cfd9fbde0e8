"""Writing evoci's facts to DuckDB, idempotently, and never losing one to a lock.

Every insert is ``on conflict do nothing`` on the table's key, so a re-run (after a
crash, or a Prefect retry) writes nothing twice. ``tasks.status`` and
``runs.finished_at`` are state and are upserted. Table meanings: ``sql/schema.sql``.

A write waits (bounded, ``EVOCI_DB_WAIT_S``) while another process holds the file; if
the wait is spent, its batch goes to the spool (``spool.py``) and the next write
replays it, so a long-held file costs time, never facts. The two *claims* (a run's
config, a task's identity) must read before they write: they raise ``DatabaseLocked``
instead, which the node task running them retries.

On a PostgreSQL store (``evoci.store.postgres``) the same statements are transactions on the
server: no lock to wait for, so no spool.

A model call is written behind (``call``): its row goes to the spool at once, which a killed
process does not lose, and a thread writes the spool to the file moments later. A synchronous
write took 75–110 ms a call (open the file, check the lease, commit), and the model gateway
holds the agent's next request until the last call is recorded: an agent CLI calling back to
back waited that long each time.

Every text written is ``recordable`` first. Paths and test ids come from trees an agent shaped:
a name with a byte that is no UTF-8 (``b"\\xff"``) reads in Python as a lone surrogate, which
neither DuckDB nor PostgreSQL takes, so one such name would cost the whole iteration's row.
"""

from __future__ import annotations

import atexit
import json
import logging
import re
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evoci.agents.base import AgentOutcome
from evoci.errors import DatabaseLocked, EvociError, LeaseLost
from evoci.identity import changes
from evoci.settings import location
from evoci.store import lease
from evoci.store.db import Location, transaction
from evoci.store.spool import Spool, Statement

log = logging.getLogger("evoci.store")


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


_SURROGATE = re.compile("[\ud800-\udfff]")


def recordable(text: str) -> str:
    """``text`` as a store can hold it: each lone surrogate written out, visibly, as what it stands for.

    A byte Python decoded with ``surrogateescape`` (a path's ``b"\\xff"`` is ``"\\udcff"``) becomes
    ``\\xff``, any other lone surrogate ``\\udXXX``; valid text is unchanged.
    """
    return _SURROGATE.sub(_escape, text)


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def _recordable(value: Any) -> Any:
    if isinstance(value, str):
        return recordable(value)
    if isinstance(value, (list, tuple)):
        return [_recordable(v) for v in value]
    return value


@dataclass(frozen=True)
class TaskRow:
    """A task's identity and state, as the ``tasks`` table holds it."""

    run_id: str
    task_id: str
    protocol: str
    status: str  # running | done | invalid | infra_error | input_error
    repo: str | None = None
    base_ref: str | None = None
    oracle_ref: str | None = None
    base_sha: str | None = None
    oracle_sha: str | None = None
    environment_hash: str | None = None
    sequence_id: str | None = None
    sequence_position: int | None = None
    dimension: str | None = None
    granularity: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    reason: str | None = None
    spec: dict[str, Any] | None = None  # the task's spec as the dataset gave it (identity.task_identity)


@dataclass
class IterationRow:
    """One finished iteration: its test outcomes and what each agent did."""

    run_id: str
    task_id: str
    iteration: int
    status: str  # TestStatus value, or a protocol-specific status
    outcomes: dict[str, str]  # target test id → outcome
    codebase_sha: str | None = None
    attempt: int = 0
    architect: AgentOutcome | None = None
    programmer: AgentOutcome | None = None
    patch_applied: bool | None = None
    tampered_files: list[str] = field(default_factory=list)
    discarded_files: list[str] = field(default_factory=list)
    integrity_flags: list[str] = field(default_factory=list)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    wall_s: float | None = None
    test_s: float | None = None


class Facts:
    """The write side of the results database at ``path``."""

    def __init__(self, path: Location, *, wait_s: float | None = None):
        self.path = location(path)
        self.wait_s = wait_s
        self.spool = Spool(self.path) if isinstance(self.path, Path) else None

    def quick(self) -> "Facts":
        """The same database without waiting for a lock: for failure paths, which must never block."""
        return Facts(self.path, wait_s=0)

    @contextmanager
    def _transaction(self, claim: str | None = None):
        """A write transaction that first replays the spool's pending batches (see ``transaction`` for ``claim``)."""
        if self.spool is None:
            with transaction(self.path, wait_s=self.wait_s, claim=claim) as con:
                lease.check(self.path, con)  # a process that lost its run to another writes nothing
                yield con
            return
        with transaction(self.path, wait_s=self.wait_s, claim=claim) as con:
            lease.check(self.path, con)  # a process that lost its run to another writes nothing
            replayed = self.spool.replay(con)
            yield con
        self.spool.written(replayed)

    def _write(self, batch: list[Statement]) -> None:
        """Write ``batch`` now, or (if the file stays locked) keep it in the spool for the next write."""
        batch = [(sql, _recordable(params)) for sql, params in batch]
        try:
            with self._transaction() as con:
                for sql, params in batch:
                    con.execute(sql, params)
        except DatabaseLocked as exc:
            lease.check(self.path)  # nor does it leave facts for later once its lease may have passed on
            kept = self.spool.add(batch)
            log.warning("%s — %d statement(s) kept in %s and written by the next write", exc, len(batch), kept.parent)

    def write_batch(self, batch: list[Statement]) -> None:
        """Write protocol-specific rows (``(sql, parameters)`` inserts) the lock-safe way, spool included."""
        if batch:
            self._write(batch)

    def flush(self) -> int:
        """Write the spool's pending batches now; return how many there were."""
        pending = len(self.spool.pending()) if self.spool else 0
        if pending:
            with self._transaction():
                pass
        return pending

    # -- claims: read, compare, write -----------------------------------------------------
    def claim_run(self, run_id: str, *, protocol: str, dataset: str, max_iterations: int | None,
                  config_hash: str, config: dict[str, Any], dataset_tasks: int | None = None) -> dict[str, Any] | None:
        """Record the run if it is new; if it exists with another config hash or dataset, return what it recorded.

        The answer is ``{"config": <recorded RunConfig>, "dataset": <recorded dataset name>}``. A claim
        over the whole dataset (``dataset_tasks`` given) also takes the run's lease, in the same
        transaction: ``RunBusy`` if another live process holds it.
        """
        with self._transaction(claim=f"run:{run_id}") as con:
            if dataset_tasks is not None:
                lease.take(con, self.path, run_id)
            row = con.execute("select config_hash, config, dataset from runs where run_id = ?", [run_id]).fetchone()
            if row and (row[0] != config_hash or row[2] != dataset):
                return {"config": json.loads(row[1]), "dataset": row[2]}
            for sql, params in _run(run_id, protocol, dataset, max_iterations, config_hash, config, dataset_tasks):
                con.execute(sql, params)
        return None

    def claim_task(self, row: TaskRow, *, resolved: tuple[str, ...] = ()) -> list[str]:
        """Record the task unless its recorded spec (or the ``resolved`` columns) differ; return the differences.

        A task already recorded is updated only by a claim that checks ``resolved`` columns, so a
        refused task keeps its recorded state. The task's lease is taken in the same transaction
        (``RunBusy`` if another live process holds it).
        """
        with self._transaction(claim=f"task:{row.run_id}:{row.task_id}") as con:
            lease.take(con, self.path, row.run_id, row.task_id)
            found = con.execute(
                "select spec, base_sha, oracle_sha, environment_hash from tasks where run_id = ? and task_id = ?",
                [row.run_id, row.task_id]).fetchone()
            if found:
                spec, *columns = found
                recorded = dict(zip(("base_sha", "oracle_sha", "environment_hash"), columns))
                diff = changes(json.loads(spec), row.spec) if spec and row.spec else []
                diff += [f"{k}: {recorded[k]} → {getattr(row, k)}" for k in resolved
                         if recorded[k] is not None and getattr(row, k) is not None and recorded[k] != getattr(row, k)]
                if diff:
                    return diff
                if not resolved:
                    return []  # the spec matches; the state is left alone until the commits match too
            con.execute(*_task(row))
        return []

    # -- facts ------------------------------------------------------------------------------
    def run(self, run_id: str, *, protocol: str, dataset: str, max_iterations: int | None,
            config_hash: str, config: dict[str, Any], dataset_tasks: int | None = None) -> None:
        self._write(_run(run_id, protocol, dataset, max_iterations, config_hash, config, dataset_tasks))

    def run_finished(self, run_id: str) -> None:
        self._write([("update runs set finished_at = ? where run_id = ?", [_now(), run_id])])

    def task(self, row: TaskRow) -> None:
        """Insert the task or update its state; identity columns keep their first known value."""
        self._write([_task(row)])

    def task_status(self, run_id: str, task_id: str, status: str, reason: str | None = None) -> None:
        self._write([("update tasks set status = ?, reason = ?, updated_at = ? where run_id = ? and task_id = ?",
                      [status, reason, _now(), run_id, task_id])])

    def targets(self, run_id: str, task_id: str, roles: dict[str, str]) -> None:
        """Record the target set: test id → role ('target', 'F2P', 'P2P', ...)."""
        ids = sorted(roles)
        self._write([("""insert into targets select ?, ?, unnest(?::varchar[]), unnest(?::varchar[])
                         on conflict do nothing""", [run_id, task_id, ids, [roles[t] for t in ids]])])

    def iteration(self, row: IterationRow) -> None:
        """Record one iteration, its test outcomes, agent calls and trajectories, atomically."""
        key = [row.run_id, row.task_id, row.iteration, row.attempt]
        agents = [(r, o) for r, o in (("architect", row.architect), ("programmer", row.programmer)) if o]
        ids = sorted(row.outcomes)
        batch: list[Statement] = [(
            """insert into iterations (run_id, task_id, iteration, attempt, status, codebase_sha,
                   architect_status, programmer_status, patch_applied, tampered_files, discarded_files,
                   integrity_flags, started_at, finished_at, wall_s, architect_s, programmer_s, test_s)
               values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
            [*key, row.status, row.codebase_sha,
             row.architect.status.value if row.architect else None,
             row.programmer.status.value if row.programmer else None,
             row.patch_applied, row.tampered_files, row.discarded_files, row.integrity_flags, row.started_at,
             row.finished_at, row.wall_s,
             row.architect.seconds if row.architect else None,
             row.programmer.seconds if row.programmer else None, row.test_s],
        )]
        if ids:
            batch.append(("""insert into test_results select ?, ?, ?, ?, unnest(?::varchar[]), unnest(?::varchar[])
                             on conflict do nothing""", [*key, ids, [row.outcomes[t] for t in ids]]))
        for role, outcome in agents:
            batch += _calls(key, role, outcome)
            batch.append(_trajectory(key, role, outcome))
        self._write(batch)

    def grading(self, run_id: str, task_id: str, iteration: int, *, status: str, apply_method: str | None,
                overridden: list[str], collisions: dict[str, int], exit_code: int | None, output_tail: str,
                attempt: int = 0) -> None:
        """Record what a SWE-bench-style grading did besides running the tests (see ``gradings``)."""
        self._write([("insert into gradings values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
                      [run_id, task_id, iteration, attempt, status, apply_method, overridden,
                       json.dumps(collisions, sort_keys=True), exit_code, output_tail])])

    def failure_label(self, run_id: str, task_id: str, judge_model: str, *, status: str, label: str | None,
                      reason: str, calls: list[Any]) -> None:
        """Record a judge's failure-taxonomy label for one instance, and the judge's model calls."""
        self._write([("insert into failure_labels values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
                       [run_id, task_id, judge_model, status, label, reason, _now()]),
                     *_calls([run_id, task_id, 1, 0], "judge", AgentOutcome(calls=list(calls)))])

    def repairs(self, run_id: str, task_id: str, records: list[Any], environment_hash: str) -> None:
        """Record one self-repair round: each (module, distribution) added to the environment."""
        self._write([("insert into environment_repairs values (?, ?, ?, ?, ?, ?) on conflict do nothing",
                      [run_id, task_id, r.attempt, r.module, r.distribution, environment_hash]) for r in records])

    def call(self, run_id: str, task_id: str, iteration: int, role: str, outcome: AgentOutcome, index: int) -> None:
        """Record one model call as soon as it is answered (a run killed mid-node keeps what it paid for).

        Into the spool at once, into the file moments later (the module's docstring says why); every
        later write of this or any process replays it first. A lease the clock says may have passed
        on, or a spool that cannot be written, takes the synchronous path, which decides and says.
        """
        batch = [_call([run_id, task_id, iteration, 0], role, outcome, index, outcome.calls[index])]
        if self.spool is None:
            self._write(batch)
            return
        try:
            lease.check(self.path)
            self.spool.add([(sql, _recordable(params)) for sql, params in batch])
        except (LeaseLost, OSError):
            self._write(batch)
            return
        _behind.soon(self.path)

    def interrupted_calls(self, run_id: str, task_id: str, iteration: int, role: str, outcome: AgentOutcome) -> None:
        """Keep the calls of an agent attempt that an infrastructure failure cut short (they were paid for)."""
        self._write(_calls([run_id, task_id, iteration, 0], role, outcome))

    def failure(self, run_id: str, *, task_id: str = "", iteration: int = -1, node: str, kind: str,
                error: BaseException | str) -> None:
        """Log a failure that produced no score (infrastructure, bad input, invalid task)."""
        error_type = type(error).__name__ if isinstance(error, BaseException) else "Error"
        self._write([("insert into failures values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
                      [run_id, task_id, iteration, node, kind, error_type, str(error), _now()])])


class _WriteBehind:
    """Writes each database's spool shortly after a call was spooled: one thread per file, while there is work."""

    QUIET_S = 0.2  # calls answered within this of each other go in one transaction
    WAIT_S = 2.0  # a file held longer by another process is left to the next write

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.wanted: set[Path] = set()
        self.threads: dict[Path, threading.Thread] = {}

    def soon(self, path: Path) -> None:
        with self.lock:
            self.wanted.add(path)
            if path not in self.threads:
                self.threads[path] = threading.Thread(target=self._run, args=(path,), name="evoci-write-behind",
                                                      daemon=True)
                self.threads[path].start()

    def _run(self, path: Path) -> None:
        while True:
            time.sleep(self.QUIET_S)
            with self.lock:
                if path not in self.wanted:
                    del self.threads[path]
                    return
                self.wanted.discard(path)
            try:
                Facts(path, wait_s=self.WAIT_S).flush()
            except (EvociError, OSError) as exc:  # the batches stay in the spool: the next write has them
                log.debug("model calls left in the spool of %s for the next write: %s", path, exc)

    def drain(self, timeout_s: float = 30.0) -> None:
        """Wait until every spooled call was given its try (tests, and a caller about to read the file)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                threads = list(self.threads.values())
            if not threads:
                return
            for thread in threads:
                thread.join(max(0.0, deadline - time.monotonic()))


_behind = _WriteBehind()
# A process that ends normally writes what it spooled before it goes: a daemon thread would be
# stopped mid-write, and a user reading the file with DuckDB itself would miss the last calls.
atexit.register(_behind.drain, 10.0)


def _run(run_id: str, protocol: str, dataset: str, max_iterations: int | None, config_hash: str,
         config: dict[str, Any], dataset_tasks: int | None) -> list[Statement]:
    return [(
        """insert into runs (run_id, protocol, dataset, max_iterations, config_hash, config, created_at, dataset_tasks)
           values (?, ?, ?, ?, ?, ?, ?, ?)
           on conflict (run_id) do update set dataset_tasks = coalesce(excluded.dataset_tasks, runs.dataset_tasks)""",
        [run_id, protocol, dataset, max_iterations, config_hash, json.dumps(config, sort_keys=True), _now(),
         dataset_tasks],
    )]


def _task(row: TaskRow) -> Statement:
    return (
        """insert into tasks (run_id, task_id, protocol, repo, base_ref, oracle_ref, base_sha, oracle_sha,
               environment_hash, sequence_id, sequence_position, dimension, granularity, metadata,
               status, reason, updated_at, spec)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           on conflict (run_id, task_id) do update set
               base_sha = coalesce(tasks.base_sha, excluded.base_sha),
               oracle_sha = coalesce(tasks.oracle_sha, excluded.oracle_sha),
               environment_hash = coalesce(tasks.environment_hash, excluded.environment_hash),
               spec = coalesce(tasks.spec, excluded.spec),
               status = excluded.status, reason = excluded.reason, updated_at = excluded.updated_at""",
        [row.run_id, row.task_id, row.protocol, row.repo, row.base_ref, row.oracle_ref, row.base_sha,
         row.oracle_sha, row.environment_hash, row.sequence_id, row.sequence_position, row.dimension,
         row.granularity, json.dumps(row.metadata, sort_keys=True), row.status, row.reason, _now(),
         json.dumps(row.spec, sort_keys=True) if row.spec is not None else None],
    )


def _call(key: list[Any], role: str, outcome: AgentOutcome, index: int, call: Any) -> Statement:
    return (
        """insert into agent_calls (run_id, task_id, iteration, attempt, role, node_run, node_try, call_index, model,
               provider, input_tokens, output_tokens, cached_tokens, cost_usd, latency_s, finish_reason, error)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
        [*key, role, outcome.node_run, outcome.node_try, index, call.model, call.provider, call.input_tokens,
         call.output_tokens, call.cached_tokens, call.cost_usd, call.latency_s, call.finish_reason, call.error],
    )


def _calls(key: list[Any], role: str, outcome: AgentOutcome) -> list[Statement]:
    return [_call(key, role, outcome, index, call) for index, call in enumerate(outcome.calls)]


def _trajectory(key: list[Any], role: str, outcome: AgentOutcome) -> Statement:
    return (
        """insert into trajectories (run_id, task_id, iteration, attempt, role, status, message, seconds, trajectory)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
        [*key, role, outcome.status.value, outcome.message, outcome.seconds,
         json.dumps(outcome.trajectory, default=str)],
    )
