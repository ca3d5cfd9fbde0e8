"""Retry a failed deployment run exactly as the Prefect UI's Retry button does.

Prefect 3.8.8's UI (``prefect/server/ui-v2``, the flow run page's "Retry Flow Run" dialog)
sends ``POST /api/flow_runs/{id}/set_state`` with ``{"state": {"type": "SCHEDULED", "name":
"AwaitingRetry", "message": "Retry from the UI"}, "force": true}``; the older UI at ``/``
sends the same state with ``"force": false`` (``retryFlowRun`` in ``prefect/server/ui``).
Either way the run goes back to Scheduled, the process serving its deployment picks it up
again (same flow run id, ``run_count`` + 1), and, because node results are persisted, only
the nodes that did not complete execute; the others are read back (state ``Cached``).
``prefect flow-run retry ID`` does the same with a state named ``Scheduled``.
"""

from __future__ import annotations

from uuid import UUID

UI_MESSAGE = "Retry from the UI"


def retry_flow_run(flow_run_id: UUID | str, *, force: bool = True) -> None:
    """Send the UI's Retry request for ``flow_run_id``; raise if the server refuses it."""
    from prefect import get_client
    from prefect.client.schemas.responses import SetStateStatus
    from prefect.states import AwaitingRetry

    from evoci.errors import InputError

    with get_client(sync_client=True) as client:
        result = client.set_flow_run_state(UUID(str(flow_run_id)), AwaitingRetry(message=UI_MESSAGE), force=force)
    if result.status != SetStateStatus.ACCEPT:
        reason = getattr(result.details, "reason", None) or result.status.value
        raise InputError(f"the server refused to retry flow run {flow_run_id}: {reason} — only a finished run "
                         "created from a deployment can be retried")
