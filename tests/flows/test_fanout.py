"""The fan-out of a run's tasks: a subflow Prefect's API refused is started again; anything else is not."""

from __future__ import annotations

import httpx
from prefect.exceptions import PrefectHTTPStatusError

from evoci.flows.benchmark import each_in_subflows


def refused(status: int) -> PrefectHTTPStatusError:
    request = httpx.Request("POST", "http://127.0.0.1:4200/api/task_runs/")
    response = httpx.Response(status, request=request, json={"exception_message": "Service Unavailable"})
    return PrefectHTTPStatusError.from_httpx_error(httpx.HTTPStatusError("refused", request=request, response=response))


class Subflow:
    """Fails with ``errors[item]`` (in order) before it returns ``item``."""

    name = "subflow"

    def __init__(self, errors: dict[str, list[Exception]]):
        self.errors, self.calls = errors, []

    def __call__(self, item: str) -> str:
        self.calls.append(item)
        if self.errors.get(item):
            raise self.errors[item].pop(0)
        return item


def test_a_subflow_the_api_refused_is_started_again_until_it_runs():
    # What the embedded SQLite server answers with many subflows at once: 503, after the client's retries.
    subflow = Subflow({"a": [refused(503), refused(503)], "b": []})
    results, failed, _ = each_in_subflows(subflow, [("a", "a"), ("b", "b")], 2, pauses=(0.0, 0.0, 0.0))
    assert results == ["a", "b"] and failed == []
    assert subflow.calls.count("a") == 3 and subflow.calls.count("b") == 1


def test_a_subflow_whose_run_could_not_even_be_created_in_time_is_started_again():
    # A locked SQLite server can also not answer at all: the client's read times out, with no message.
    subflow = Subflow({"a": [httpx.ReadTimeout("")]})
    results, failed, _ = each_in_subflows(subflow, [("a", "a")], 1, pauses=(0.0,))
    assert results == ["a"] and failed == [] and subflow.calls == ["a", "a"]


def test_a_refusal_that_lasts_past_the_pauses_fails_the_task_and_the_others_go_on():
    subflow = Subflow({"a": [refused(503)] * 4})
    results, failed, _ = each_in_subflows(subflow, [("a", "a"), ("b", "b")], 1, pauses=(0.0, 0.0))
    assert results == ["b"] and [name for name, _ in failed] == ["a"] and subflow.calls.count("a") == 3


def test_other_failures_are_never_started_again():
    subflow = Subflow({"a": [refused(409)], "b": [RuntimeError("the task's own failure")]})
    results, failed, _ = each_in_subflows(subflow, [("a", "a"), ("b", "b")], 2, pauses=(0.0,))
    assert results == [] and sorted(name for name, _ in failed) == ["a", "b"]
    assert sorted(subflow.calls) == ["a", "b"]
