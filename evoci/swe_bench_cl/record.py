"""The one recorder of a SWE-Bench-CL run's facts, so the flow body reads as the protocol's steps.

Facts follow the indexing of ``cl_attempts.sql``: every issue is a ``tasks`` row with its
``sequence_id`` and ``sequence_position``; every attempt is an ``iterations`` row at
iteration = memory stage i and its attempt number, with ``wall_s`` = the whole attempt
(retrieval, agent, grading) for TUE. Every write is idempotent: a resumed run records
nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from evoci.errors import DatasetError
from evoci.runtime import RunContext
from evoci.settings import location
from evoci.store import IterationRow, TaskRow
from evoci.store.db import transaction
from evoci.swe_bench_cl.loader import CLIssue
from evoci.swe_bench_cl.memory import Retrieved
from evoci.swe_bench_cl.report import publish_cl
from evoci.swe_evo.agents import Prediction
from evoci.swebench.grade import Grade
from evoci.tasks.identity import record_run

PROTOCOL = "swe-bench-cl"


@dataclass
class CLRecorder:
    run: RunContext

    def run_started(self, issues: int, n_max: int, errors: list[DatasetError]) -> None:
        """Claim the run id (a DriftError if it holds another config or dataset); record the bad lines."""
        run = self.run
        record_run(run, dataset_tasks=issues + len(errors), max_iterations=n_max)
        for error in errors:
            run.facts.failure(run.run_id, node="dataset", kind="input", error=error)

    def issue_started(self, issue: CLIssue) -> None:
        """The issue's row (placed in its sequence) and its targets (an id in both lists is F2P)."""
        run, instance = self.run, issue.instance
        run.facts.task(TaskRow(
            run.run_id, issue.instance_id, PROTOCOL, "running", repo=instance.repo, base_ref=instance.base_commit,
            sequence_id=issue.sequence_id, sequence_position=issue.position,
            metadata={"log_parser": instance.log_parser, "record_hash": instance.record_hash,
                      "repo_path": instance.repo_path, "dependencies": list(issue.dependencies),
                      "difficulty": issue.difficulty, "difficulty_score": issue.difficulty_score,
                      "created_at": issue.created_at}))
        roles = {**{t: "P2P" for t in instance.p2p}, **{t: "F2P" for t in instance.f2p}}
        run.facts.targets(run.run_id, issue.instance_id, roles)

    def prepared(self, issue: CLIssue, base_sha: str, environment_hash: str) -> None:
        self.run.facts.task(TaskRow(self.run.run_id, issue.instance_id, PROTOCOL, "running", base_sha=base_sha,
                                    environment_hash=environment_hash, sequence_id=issue.sequence_id,
                                    sequence_position=issue.position))

    def attempted(self, issue: CLIssue, stage: int, attempt: int, prediction: Prediction, grade: Grade,
                  started: datetime, finished: datetime, wall_s: float, retrieved: list[Retrieved],
                  retrieval_s: float) -> None:
        run = self.run
        run.facts.iteration(IterationRow(
            run_id=run.run_id, task_id=issue.instance_id, iteration=stage, attempt=attempt, status=grade.status,
            outcomes=grade.outcomes, patch_applied=grade.patch_applied, programmer=prediction.outcome,
            tampered_files=sorted({*prediction.tampered, *grade.overridden}), integrity_flags=grade.integrity_flags,
            started_at=started, finished_at=finished, wall_s=wall_s, test_s=grade.duration_s))
        run.facts.grading(run.run_id, issue.instance_id, stage, status=grade.status, apply_method=grade.apply_method,
                          overridden=grade.overridden, collisions=grade.collisions, exit_code=grade.exit_code,
                          output_tail=grade.output_tail, attempt=attempt)
        if retrieved:
            rows: list[list[Any]] = [[run.run_id, issue.instance_id, stage, attempt, rank, r.experience.task_id,
                                      r.similarity, retrieval_s] for rank, r in enumerate(retrieved, start=1)]
            with transaction(run.db) as con:
                con.executemany("insert into cl_retrievals values (?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing", rows)

    def issue_status(self, issue: CLIssue, status: str, reason: str | None = None,
                     error: BaseException | None = None) -> None:
        """``done``, or ``input_error`` / ``environment_error`` / ``infra_error`` with the reason (never scored)."""
        run = self.run
        if error is not None:
            kind = "input" if status == "input_error" else "infrastructure"
            run.facts.failure(run.run_id, task_id=issue.instance_id, node="flow", kind=kind, error=error)
        run.facts.task_status(run.run_id, issue.instance_id, status, reason)

    def run_finished(self) -> None:
        self.run.facts.run_finished(self.run.run_id)
        publish_cl(location(self.run.db), self.run.run_id)  # a file, or a PostgreSQL URL as it is
