"""Grading a batch of submissions."""

from src import stats
from src.validator import Submission, Validator


class Grader:
    def __init__(self, validator: Validator | None = None):
        self.validator = validator or Validator()

    def grade(self, submissions: list[Submission]) -> list[str]:
        """The students whose submissions were accepted, in order."""
        accepted = []
        for submission in submissions:
            if self.validator.validate(submission):
                stats.record_accepted()
                accepted.append(submission.student)
            else
                stats.record_rejected()
        return accepted
