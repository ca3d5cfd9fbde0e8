"""The results database: short-lived connections (``db``) and idempotent fact writes (``facts``)."""

from evoci.store.db import connect, transaction
from evoci.store.facts import Facts, IterationRow, TaskRow

__all__ = ["Facts", "IterationRow", "TaskRow", "connect", "transaction"]
