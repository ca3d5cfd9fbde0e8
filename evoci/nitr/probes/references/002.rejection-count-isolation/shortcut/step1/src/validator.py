"""Deciding whether a submission can be graded. Pure: no state, no I/O."""

from dataclasses import dataclass

from src import stats


@dataclass(frozen=True)
class Submission:
    student: str
    content: str


class Validator:
    def validate(self, submission: Submission) -> bool:
        ok = bool(submission.content.strip()) and len(submission.content) <= 2000
        if not ok:
            stats.rejected += 1
        return ok
