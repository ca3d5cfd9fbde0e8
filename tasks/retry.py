"""Retry policy of the node tasks: infrastructure failures only.

An agent's outcome is data and is never retried (a paid model call is not an idempotent
GET); a sandbox that died, a daemon that went away or a locked database is retried.
"""

from __future__ import annotations

from typing import Any

from evoci.errors import is_infrastructure

RETRIES = 2
RETRY_DELAYS = [2, 10]


def infrastructure_only(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry when the node failed with an InfrastructureError."""
    exc = state.data if isinstance(state.data, BaseException) else state.result(raise_on_failure=False)
    return is_infrastructure(exc)
