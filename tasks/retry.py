"""Retry policy of the node tasks: infrastructure failures only.

An agent's outcome is data and is never retried (a paid model call is not an idempotent
GET); a sandbox that died, a daemon that went away or a locked database is retried.
"""

from __future__ import annotations

from typing import Any

from evoci import interrupt
from evoci.domain import RunConfig
from evoci.errors import is_infrastructure


def infrastructure_only(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry when the node failed with an InfrastructureError."""
    if interrupt.stopping():  # a signal asked evoci to stop: the node ends, recorded as interrupted
        return False
    exc = state.data if isinstance(state.data, BaseException) else state.result(raise_on_failure=False)
    return is_infrastructure(exc)


# What every node task is decorated with: persisted results (so a retried flow run reads
# completed nodes back) and infrastructure-only retries. The counts and delays are
# RunConfig's defaults; flows apply a run's own with ``task.with_options``.
NODE_OPTIONS: dict[str, Any] = dict(
    persist_result=True,
    retries=RunConfig.model_fields["node_retries"].default,
    retry_delay_seconds=RunConfig.model_fields["retry_delays_s"].default,
    retry_condition_fn=infrastructure_only,
)
