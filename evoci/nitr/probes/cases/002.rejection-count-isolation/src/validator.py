"""Deciding whether a submission can be graded. Pure: no state, no I/O."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Submission:
    student: str
    content: str


class Validator:
    def validate(self, submission: Submission) -> bool:
        return bool(submission.content.strip())
