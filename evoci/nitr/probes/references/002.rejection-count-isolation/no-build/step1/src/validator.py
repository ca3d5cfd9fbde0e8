"""Deciding whether a submission can be graded. Pure: no state, no I/O."""

from dataclasses import dataclass

MAX_CONTENT_CHARS = 2000


@dataclass(frozen=True)
class Submission:
    student: str
    content: str


class Validator:
    def validate(self, submission: Submission) -> bool:
        return bool(submission.content.strip()) and len(submission.content) <= MAX_CONTENT_CHARS
