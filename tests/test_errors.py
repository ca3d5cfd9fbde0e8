"""Which failures are infrastructure (retried, never scored) and which are not."""

import httpx
import pytest
from prefect.exceptions import PrefectHTTPStatusError

from evoci.errors import SandboxError, TaskSpecError, is_infrastructure


def _prefect_api_error(status: int) -> PrefectHTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:4200/api/task_runs/")
    response = httpx.Response(status, request=request, json={"exception_message": "Service Unavailable"})
    try:
        response.raise_for_status()
    except httpx.HTTPStatusError as exc:
        return PrefectHTTPStatusError.from_httpx_error(exc)
    raise AssertionError("not an error status")


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_prefects_api_unavailable_after_its_client_retries_is_infrastructure(status):
    # Seen at 50 tasks × concurrency 4: the ephemeral server's SQLite stayed locked (503) past the
    # client's retries when a task's subflow started. The run must say "retry", not "fix the cause".
    assert is_infrastructure(_prefect_api_error(status))


@pytest.mark.parametrize("error", [_prefect_api_error(404), _prefect_api_error(422), TaskSpecError("no such ref"),
                                   ValueError("a bug")])
def test_a_refusal_bad_input_or_a_bug_is_not_infrastructure(error):
    assert not is_infrastructure(error)


def test_evocis_own_infrastructure_errors_still_are():
    assert is_infrastructure(SandboxError("bubblewrap could not start"))
