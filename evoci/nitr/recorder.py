"""The one place NITR facts are written: exactly what the nitr_* views read.

    tasks         one row per probe, with ``dimension`` and ``granularity``
    targets       ``unit_test:<name>`` → role 'functional' (each functional test program),
                  every structural module ``<module>:<name>`` → role 'structural'
    iterations    one row per step k (1..n) and attempt; the final step's status is the
                  grade's ('ok' or 'build_error'); an intermediate step is 'ok' / 'build_error'
                  when graded as a diagnostic, else 'not_graded'
    test_results  the graded steps' outcome per target ('passed' / 'failed')

An attempt's rows are written after its final grade, in one go: a run killed between
steps leaves no half-judged attempt for the views to read (it resumes from the cache).
"""

from __future__ import annotations

from datetime import datetime, timezone

from evoci.nitr.evaluator import NitrGrade
from evoci.nitr.loader import NitrProbe
from evoci.runtime import RunContext
from evoci.store import IterationRow, TaskRow

NOT_GRADED = "not_graded"


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


class ProbeRecorder:
    """Writes one probe's facts for one run."""

    def __init__(self, run: RunContext, probe: NitrProbe):
        self.run, self.probe = run, probe

    def start(self) -> None:
        p = self.probe
        self.run.facts.task(TaskRow(
            self.run.run_id, p.probe_id, "nitr", "running", repo=p.suite, base_ref="starter", oracle_ref=None,
            dimension=p.dimension, granularity=p.granularity,
            metadata={"language": p.language, "steps": p.steps, "content_hash": p.content_hash,
                      "spec": p.spec_path is not None},
        ))
        self.run.facts.targets(self.run.run_id, p.probe_id, p.pipeline.targets())

    def attempt(self, attempt: int, steps: list[tuple[int, object, NitrGrade | None, float]]) -> None:
        """Record every step of one attempt: (step, StepResult, grade or None, wall seconds)."""
        for step, result, grade, wall_s in steps:
            self.run.facts.iteration(IterationRow(
                run_id=self.run.run_id, task_id=self.probe.probe_id, iteration=step, attempt=attempt,
                status=grade.status if grade else NOT_GRADED, outcomes=grade.outcomes if grade else {},
                codebase_sha=result.sha, programmer=result.outcome, finished_at=_now(), wall_s=wall_s,
                test_s=grade.duration_s if grade else None, tampered_files=list(getattr(result, "tampered_files", [])),
            ))

    def status(self, status: str, reason: str | None = None) -> None:
        self.run.facts.task_status(self.run.run_id, self.probe.probe_id, status, reason)

    def failure(self, kind: str, error: BaseException, node: str = "flow") -> None:
        self.run.facts.failure(self.run.run_id, task_id=self.probe.probe_id, node=node, kind=kind, error=error)
