"""The one recorder of a SWE-EVO run's facts, so the flow body reads as the protocol's steps.

Every write is idempotent (``evoci.store.facts``): a resumed run records nothing twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from evoci.errors import DatasetError
from evoci.runtime import RunContext
from evoci.settings import location
from evoci.store import IterationRow, TaskRow
from evoci.swe_evo.agents import Prediction
from evoci.swe_evo.loader import EvoInstance
from evoci.swe_evo.report import publish_swe_evo
from evoci.swebench.grade import Grade
from evoci.tasks.identity import record_run


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass
class EvoRecorder:
    run: RunContext

    def run_started(self, instances: int, errors: list[DatasetError]) -> None:
        """Claim the run id (a DriftError if it holds another config or dataset); record the bad records."""
        run = self.run
        record_run(run, dataset_tasks=instances + len(errors), max_iterations=1)
        for error in errors:
            run.facts.failure(run.run_id, node="dataset", kind="input", error=error)

    def instance_started(self, instance: EvoInstance) -> None:
        """The instance's row and its targets (an id in both lists is F2P)."""
        run = self.run
        run.facts.task(TaskRow(
            run.run_id, instance.instance_id, "swe-evo", "running", repo=instance.repo, base_ref=instance.base_commit,
            oracle_ref=instance.end_version_commit,
            metadata={"start_version": instance.start_version, "end_version": instance.end_version,
                      "log_parser": instance.log_parser, "record_hash": instance.record_hash,
                      "repo_path": instance.repo_path}))
        roles = {**{t: "P2P" for t in instance.p2p}, **{t: "F2P" for t in instance.f2p}}
        run.facts.targets(run.run_id, instance.instance_id, roles)

    def prepared(self, instance: EvoInstance, base_sha: str, environment_hash: str) -> None:
        self.run.facts.task(TaskRow(self.run.run_id, instance.instance_id, "swe-evo", "running", base_sha=base_sha,
                                    environment_hash=environment_hash))

    def graded(self, instance: EvoInstance, prediction: Prediction, grade: Grade, started: datetime,
               wall_s: float) -> None:
        """Iteration 1 = the prediction: its targets' outcomes, the agent's outcome, what grading did."""
        run = self.run
        run.facts.iteration(IterationRow(
            run_id=run.run_id, task_id=instance.instance_id, iteration=1, status=grade.status,
            outcomes=grade.outcomes, patch_applied=grade.patch_applied, programmer=prediction.outcome,
            tampered_files=sorted({*prediction.tampered, *grade.overridden}), integrity_flags=grade.integrity_flags,
            started_at=started, finished_at=now(), wall_s=wall_s,
            test_s=grade.duration_s))
        run.facts.grading(run.run_id, instance.instance_id, 1, status=grade.status, apply_method=grade.apply_method,
                          overridden=grade.overridden, collisions=grade.collisions, exit_code=grade.exit_code,
                          output_tail=grade.output_tail)
        run.facts.task_status(run.run_id, instance.instance_id, "done")

    def ended(self, instance: EvoInstance, status: str, reason: str, error: BaseException | None = None) -> None:
        """``invalid``, ``input_error`` or ``infra_error``: recorded with the reason, never scored."""
        run = self.run
        if error is not None:
            kind = "input" if status == "input_error" else "infrastructure"
            run.facts.failure(run.run_id, task_id=instance.instance_id, node="flow", kind=kind, error=error)
        run.facts.task_status(run.run_id, instance.instance_id, status, reason)

    def run_finished(self) -> None:
        self.run.facts.run_finished(self.run.run_id)
        publish_swe_evo(location(self.run.db), self.run.run_id)  # a file, or a PostgreSQL URL as it is
