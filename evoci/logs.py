"""Loggers: Prefect's run logger inside a flow or task run (shown in the UI), else evoci's own."""

from __future__ import annotations

import logging

from prefect.exceptions import MissingContextError
from prefect.logging import get_run_logger


def run_logger() -> logging.Logger | logging.LoggerAdapter:
    """The current run's logger, or ``evoci`` when called outside a run (``task.fn(...)``)."""
    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("evoci")

