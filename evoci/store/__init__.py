"""The results database: short-lived connections (``db``) and idempotent fact writes (``facts``)."""

from evoci.store.db import connect, reading, transaction
from evoci.store.facts import Facts, IterationRow, TaskRow

__all__ = ["Facts", "IterationRow", "TaskRow", "connect", "reading", "transaction"]
