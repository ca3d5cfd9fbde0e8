"""Writing evoci's facts to DuckDB, idempotently.

Every insert is ``on conflict do nothing`` on the table's key, so a re-run (after a
crash, or a Prefect retry) writes nothing twice. ``tasks.status`` and
``runs.finished_at`` are state and are upserted. Table meanings: ``sql/schema.sql``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evoci.agents.base import AgentOutcome
from evoci.store.db import transaction


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


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

    def __init__(self, path: Path):
        self.path = Path(path)

    def run(self, run_id: str, *, protocol: str, dataset: str, max_iterations: int | None,
            config_hash: str, config: dict[str, Any]) -> None:
        with transaction(self.path) as con:
            con.execute(
                """insert into runs (run_id, protocol, dataset, max_iterations, config_hash, config, created_at)
                   values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
                [run_id, protocol, dataset, max_iterations, config_hash, json.dumps(config, sort_keys=True), _now()],
            )

    def run_finished(self, run_id: str) -> None:
        with transaction(self.path) as con:
            con.execute("update runs set finished_at = ? where run_id = ?", [_now(), run_id])

    def task(self, row: TaskRow) -> None:
        """Insert the task or update its state; identity columns keep their first known value."""
        with transaction(self.path) as con:
            con.execute(
                """insert into tasks (run_id, task_id, protocol, repo, base_ref, oracle_ref, base_sha, oracle_sha,
                       environment_hash, sequence_id, sequence_position, dimension, granularity, metadata,
                       status, reason, updated_at)
                   values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                   on conflict (run_id, task_id) do update set
                       base_sha = coalesce(excluded.base_sha, tasks.base_sha),
                       oracle_sha = coalesce(excluded.oracle_sha, tasks.oracle_sha),
                       environment_hash = coalesce(excluded.environment_hash, tasks.environment_hash),
                       status = excluded.status, reason = excluded.reason, updated_at = excluded.updated_at""",
                [row.run_id, row.task_id, row.protocol, row.repo, row.base_ref, row.oracle_ref, row.base_sha,
                 row.oracle_sha, row.environment_hash, row.sequence_id, row.sequence_position, row.dimension,
                 row.granularity, json.dumps(row.metadata, sort_keys=True), row.status, row.reason, _now()],
            )

    def task_status(self, run_id: str, task_id: str, status: str, reason: str | None = None) -> None:
        with transaction(self.path) as con:
            con.execute(
                "update tasks set status = ?, reason = ?, updated_at = ? where run_id = ? and task_id = ?",
                [status, reason, _now(), run_id, task_id],
            )

    def targets(self, run_id: str, task_id: str, roles: dict[str, str]) -> None:
        """Record the target set: test id → role ('target', 'F2P', 'P2P', ...)."""
        ids = sorted(roles)
        with transaction(self.path) as con:
            con.execute(
                """insert into targets select ?, ?, unnest(?::varchar[]), unnest(?::varchar[])
                   on conflict do nothing""",
                [run_id, task_id, ids, [roles[t] for t in ids]],
            )

    def iteration(self, row: IterationRow) -> None:
        """Record one iteration, its test outcomes, agent calls and trajectories, atomically."""
        key = [row.run_id, row.task_id, row.iteration, row.attempt]
        agents = [(r, o) for r, o in (("architect", row.architect), ("programmer", row.programmer)) if o]
        ids = sorted(row.outcomes)
        with transaction(self.path) as con:
            con.execute(
                """insert into iterations (run_id, task_id, iteration, attempt, status, codebase_sha,
                       architect_status, programmer_status, patch_applied, tampered_files, discarded_files,
                       integrity_flags, started_at, finished_at, wall_s, architect_s, programmer_s, test_s)
                   values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
                [*key, row.status, row.codebase_sha,
                 row.architect.status.value if row.architect else None,
                 row.programmer.status.value if row.programmer else None,
                 row.patch_applied, row.tampered_files, row.discarded_files, row.integrity_flags, row.started_at, row.finished_at, row.wall_s,
                 row.architect.seconds if row.architect else None,
                 row.programmer.seconds if row.programmer else None, row.test_s],
            )
            if ids:
                con.execute(
                    """insert into test_results select ?, ?, ?, ?, unnest(?::varchar[]), unnest(?::varchar[])
                       on conflict do nothing""",
                    [*key, ids, [row.outcomes[t] for t in ids]],
                )
            for role, outcome in agents:
                _agent(con, key, role, outcome)

    def grading(self, run_id: str, task_id: str, iteration: int, *, status: str, apply_method: str | None,
                overridden: list[str], collisions: dict[str, int], exit_code: int | None, output_tail: str,
                attempt: int = 0) -> None:
        """Record what a SWE-bench-style grading did besides running the tests (see ``gradings``)."""
        with transaction(self.path) as con:
            con.execute(
                "insert into gradings values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
                [run_id, task_id, iteration, attempt, status, apply_method, overridden,
                 json.dumps(collisions, sort_keys=True), exit_code, output_tail],
            )

    def failure_label(self, run_id: str, task_id: str, judge_model: str, *, status: str, label: str | None,
                      reason: str, calls: list[Any]) -> None:
        """Record a judge's failure-taxonomy label for one instance, and the judge's model calls."""
        from evoci.agents.base import AgentOutcome

        with transaction(self.path) as con:
            con.execute("insert into failure_labels values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
                        [run_id, task_id, judge_model, status, label, reason, _now()])
            _calls(con, [run_id, task_id, 1, 0], "judge", AgentOutcome(calls=list(calls)))

    def repairs(self, run_id: str, task_id: str, records: list[Any], environment_hash: str) -> None:
        """Record one self-repair round: each (module, distribution) added to the environment."""
        with transaction(self.path) as con:
            for r in records:
                con.execute("insert into environment_repairs values (?, ?, ?, ?, ?, ?) on conflict do nothing",
                            [run_id, task_id, r.attempt, r.module, r.distribution, environment_hash])

    def interrupted_calls(self, run_id: str, task_id: str, iteration: int, role: str, outcome: AgentOutcome) -> None:
        """Keep the calls of an agent attempt that an infrastructure failure cut short (they were paid for)."""
        with transaction(self.path) as con:
            _calls(con, [run_id, task_id, iteration, 0], role, outcome)

    def failure(self, run_id: str, *, task_id: str = "", iteration: int = -1, node: str, kind: str,
                error: BaseException | str) -> None:
        """Log a failure that produced no score (infrastructure, bad input, invalid task)."""
        error_type = type(error).__name__ if isinstance(error, BaseException) else "Error"
        with transaction(self.path) as con:
            con.execute(
                "insert into failures values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
                [run_id, task_id, iteration, node, kind, error_type, str(error), _now()],
            )


def _calls(con, key: list[Any], role: str, outcome: AgentOutcome) -> None:
    for index, call in enumerate(outcome.calls):
        con.execute(
            """insert into agent_calls (run_id, task_id, iteration, attempt, role, node_try, call_index, model,
                   provider, input_tokens, output_tokens, cached_tokens, cost_usd, latency_s, finish_reason, error)
               values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
            [*key, role, outcome.node_try, index, call.model, call.provider, call.input_tokens, call.output_tokens,
             call.cached_tokens, call.cost_usd, call.latency_s, call.finish_reason, call.error],
        )


def _agent(con, key: list[Any], role: str, outcome: AgentOutcome) -> None:
    _calls(con, key, role, outcome)
    con.execute(
        """insert into trajectories (run_id, task_id, iteration, attempt, role, status, message, seconds, trajectory)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing""",
        [*key, role, outcome.status.value, outcome.message, outcome.seconds,
         json.dumps(outcome.trajectory, default=str)],
    )
