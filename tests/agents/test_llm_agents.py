"""LLM architect and programmer over the real openai and anthropic SDKs and a scripted server.

Every test runs once per wire protocol (the ``protocol`` fixture); nothing in the SDKs is
patched: they talk HTTP to ScriptedLLMServer on 127.0.0.1.
"""

from __future__ import annotations

import json

import pytest

from evoci.agents.base import REQUIREMENT_FILE, AgentContext, AgentStatus
from evoci.agents.llm import LLMArchitect, LLMProgrammer, make_chat_model
from evoci.agents.requirement import Requirement, render_requirements
from evoci.agents.scripted import (context_overflow, rate_limited, refusal, rejected, server_error, text, tool_call,
                                   tool_calls)
from evoci.errors import ProviderRejected, ProviderUnavailable, is_infrastructure

from .conftest import config_for

VALID = render_requirements([Requirement("src/calc.py: add()", "add subtracts.", "add(a, b) returns a + b.", "add(2, 3) == 5")])
INVALID = "<requirements><requirement><location>src/calc.py</location></requirement></requirements>"


def programmer(server, protocol, **overrides) -> LLMProgrammer:
    return LLMProgrammer(make_chat_model(config_for(server, protocol, **overrides)))


def architect(server, protocol, **overrides) -> LLMArchitect:
    return LLMArchitect(make_chat_model(config_for(server, protocol, **overrides)))


def write_requirement(xml: str) -> dict:
    return tool_call("write_file", {"path": REQUIREMENT_FILE, "content": xml})


def texts(value) -> str:
    """Every string inside a JSON value, one per line (to search a request's messages)."""
    if isinstance(value, str):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return "\n".join(texts(v) for v in items)


def tool_messages(outcome) -> list[dict]:
    return [m for m in outcome.trajectory if m["role"] == "tool"]


def test_the_programmer_executes_tool_calls_and_edits_the_code(serve, protocol, ctx: AgentContext) -> None:
    server = serve([
        tool_calls(("list_dir", {"path": "src"}), ("read_file", {"path": "src/calc.py"})),
        tool_call("replace_text", {"path": "src/calc.py", "old": "a - b", "new": "a + b"}),
        text("add() now adds."),
    ])  # fmt: skip
    ctx.requirement = VALID
    outcome = programmer(server, protocol).run(ctx)
    assert outcome.status is AgentStatus.OK, outcome.message
    assert ctx.sandbox.read_file("src/calc.py") == b"def add(a, b):\n    return a + b\n"
    assert [m["content"] for m in tool_messages(outcome)] == [
        "calc.py", "     1\tdef add(a, b):\n     2\t    return a - b\n(lines 1-2 of 2)", "replaced 1 occurrence in src/calc.py"]  # fmt: skip
    assert "edited 1 files: add() now adds." in outcome.message
    assert len(outcome.calls) == 3 and all(c.error is None and c.provider == protocol for c in outcome.calls)
    assert VALID.strip() in texts(server.requests[0].body)  # the requirement is in the first message
    json.dumps(outcome.trajectory)  # serialisable as stored


def test_the_architect_writes_a_valid_requirement(serve, protocol, ctx: AgentContext) -> None:
    server = serve([tool_call("read_file", {"path": ".evoci/non-passed/summary.jsonl"}), write_requirement(VALID), text("done")])
    outcome = architect(server, protocol).run(ctx)
    assert (outcome.status, outcome.message) == (AgentStatus.OK, "requirement.xml accepted after 0 re-asks")
    assert ctx.sandbox.read_file(REQUIREMENT_FILE).decode() == VALID
    assert "tests/test_calc.py::test_add" in tool_messages(outcome)[0]["content"]


def test_an_invalid_requirement_is_sent_back_with_its_errors(serve, protocol, ctx: AgentContext) -> None:
    server = serve([write_requirement(INVALID), text("done"), write_requirement(VALID), text("fixed")])
    outcome = architect(server, protocol).run(ctx)
    assert (outcome.status, outcome.message) == (AgentStatus.OK, "requirement.xml accepted after 1 re-asks")
    reask = texts(server.requests[2].body)
    assert "is not acceptable" in reask and "has no <description>" in reask


def test_a_requirement_still_invalid_after_the_reasks_is_invalid_output(serve, protocol, ctx: AgentContext) -> None:
    server = serve([write_requirement(INVALID), text("a"), text("b"), write_requirement("<oops"), text("c")])
    outcome = architect(server, protocol, max_reasks=2).run(ctx)
    assert outcome.status is AgentStatus.INVALID_OUTPUT
    assert outcome.message.startswith("requirement.xml invalid after 2 re-asks: requirement.xml is not well-formed XML")
    assert len(server.requests) == 5


def test_a_stale_requirement_does_not_count_as_written(serve, protocol, ctx: AgentContext) -> None:
    ctx.sandbox.write_file(REQUIREMENT_FILE, VALID)  # left over from an earlier iteration
    outcome = architect(serve([text("nothing to do")]), protocol, max_reasks=0).run(ctx)
    assert outcome.status is AgentStatus.INVALID_OUTPUT and "you did not write" in outcome.message


def test_a_requirement_given_as_the_answer_is_saved(serve, protocol, ctx: AgentContext) -> None:
    outcome = architect(serve([text(f"Here it is:\n{VALID}")]), protocol).run(ctx)
    assert outcome.status is AgentStatus.OK and "taken from the final answer" in outcome.message
    assert ctx.sandbox.read_file(REQUIREMENT_FILE).decode().strip() == VALID.strip()


def test_rate_limits_are_retried_after_retry_after(serve, protocol, ctx: AgentContext) -> None:
    server = serve([rate_limited(retry_after=1), text("ok")])
    outcome = programmer(server, protocol, retry_backoff_s=0).run(ctx)
    assert outcome.status is AgentStatus.OK
    first, second = server.requests
    assert second.at - first.at >= 1.0
    assert [c.error is not None for c in outcome.calls] == [True, False]
    assert outcome.calls[0].error.startswith("HTTP 429")


def test_server_errors_are_retried_with_backoff(serve, protocol, ctx: AgentContext) -> None:
    server = serve([server_error(500), server_error(529 if protocol == "anthropic" else 503), text("ok")])
    outcome = programmer(server, protocol).run(ctx)
    assert outcome.status is AgentStatus.OK
    assert [c.error.split(":")[0] if c.error else None for c in outcome.calls] == [
        "HTTP 500 " + ("api_error" if protocol == "anthropic" else "server_error"),
        "HTTP 529 overloaded_error" if protocol == "anthropic" else "HTTP 503 server_error",
        None,
    ]


def test_an_api_down_for_every_retry_is_an_outage_not_the_agents_error(serve, protocol, ctx: AgentContext) -> None:
    server = serve([server_error()] * 3)
    with pytest.raises(ProviderUnavailable, match="kept failing after 2 retries .*HTTP 500") as raised:
        programmer(server, protocol, max_retries=2).run(ctx)
    assert is_infrastructure(raised.value)  # so Prefect retries the node; never scored
    calls = raised.value.outcome.calls  # the calls made are kept for the cost record
    assert len(calls) == 3 and all(c.error for c in calls)


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_rejected_key_model_or_endpoint_is_an_input_error_and_not_retried(serve, protocol, ctx, status) -> None:
    server = serve([rejected(status), text("never sent")])
    with pytest.raises(ProviderRejected, match=rf"rejected the request \(HTTP {status} .*check the API key, the model"):
        architect(server, protocol, max_retries=3).run(ctx)
    assert len(server.requests) == 1


def test_malformed_tool_arguments_go_back_to_the_model(serve, protocol, ctx: AgentContext) -> None:
    bad = '{"path": "src/calc.py"' if protocol == "openai" else '"src/calc.py"'  # Anthropic: input not an object
    server = serve([tool_call("read_file", bad), tool_call("read_file", {"path": "src/calc.py"}), text("ok")])
    outcome = programmer(server, protocol).run(ctx)
    assert outcome.status is AgentStatus.OK
    error, good = tool_messages(outcome)
    assert error["is_error"] and ("not valid JSON" in error["content"] or "must be a JSON object" in error["content"])
    assert not good["is_error"]
    assert error["content"] in texts(server.requests[1].body)


def test_context_overflow_ends_as_a_recorded_model_error(serve, protocol, ctx: AgentContext) -> None:
    server = serve([context_overflow(), text("never sent")])
    outcome = programmer(server, protocol).run(ctx)
    assert outcome.status is AgentStatus.MODEL_ERROR
    assert len(server.requests) == 1  # not retried
    assert ("context_length_exceeded" if protocol == "openai" else "prompt is too long") in outcome.calls[0].error


def test_a_refusal_is_a_model_error(serve, protocol, ctx: AgentContext) -> None:
    outcome = programmer(serve([refusal("I won't.")]), protocol).run(ctx)
    assert outcome.status is AgentStatus.MODEL_ERROR and "refused: I won't." in outcome.message


def looping(delay: float):
    def script(protocol, request):
        return tool_call("list_dir", {}, usage={"input_tokens": 1000, "output_tokens": 100}, delay=delay)

    return script


@pytest.mark.parametrize(
    ("limit", "calls", "says"),
    [
        ({"max_steps": 3}, 3, "model turns 3 of at most 3"),
        ({"max_input_tokens": 2500}, 3, "input tokens 3000 of at most 2500"),
        ({"max_output_tokens": 100}, 1, "output tokens 100 of at most 100"),
        ({"max_cost_usd": 0.004}, 2, "cost (USD)"),  # gpt-4o: 0.0035 a call; claude-sonnet-4-5: 0.0045
        ({"max_seconds": 0.5}, None, "seconds"),
    ],
)
def test_limits_end_the_attempt(serve, protocol, ctx: AgentContext, limit: dict, calls: int, says: str) -> None:
    if limit == {"max_cost_usd": 0.004} and protocol == "anthropic":
        calls = 1
    outcome = programmer(serve(looping(0.2 if "max_seconds" in limit else 0)), protocol, **limit).run(ctx)
    assert outcome.status is AgentStatus.LIMIT and says in outcome.message
    # 0.2 s a call against 0.5 s: at most 3 calls; a loaded machine may fit only 1 (never an unbounded loop).
    assert len(outcome.calls) == calls if calls else 1 <= len(outcome.calls) <= 3
    assert outcome.trajectory[-1]["role"] == "tool"  # the trajectory is kept to the end


@pytest.mark.parametrize(
    ("protocol", "usage", "cost"),
    [
        ("openai", {"input_tokens": 10_000, "cached_tokens": 4_000, "output_tokens": 1_000}, (6_000 * 2.5 + 4_000 * 1.25 + 1_000 * 10) / 1e6),
        ("anthropic", {"input_tokens": 10_000, "cached_tokens": 4_000, "output_tokens": 1_000}, (6_000 * 3 + 4_000 * 0.3 + 1_000 * 15) / 1e6),
        ("anthropic", {"input_tokens": 10_000, "cached_tokens": 4_000, "cache_write_tokens": 2_000, "output_tokens": 1_000},
         (4_000 * 3 + 4_000 * 0.3 + 2_000 * 3.75 + 1_000 * 15) / 1e6),
    ],
)
def test_tokens_and_cost_per_call(serve, ctx: AgentContext, protocol: str, usage: dict, cost: float) -> None:
    outcome = programmer(serve([text("ok", usage=usage)]), protocol).run(ctx)
    (call,) = outcome.calls
    assert (call.input_tokens, call.cached_tokens, call.output_tokens) == (10_000, 4_000, 1_000)
    assert call.cost_usd == pytest.approx(cost)
    assert call.model == config_for.__globals__["MODELS"][protocol] and call.latency_s > 0


def test_an_unknown_model_costs_nothing_and_says_so(serve, protocol, ctx: AgentContext) -> None:
    outcome = programmer(serve([text("ok", usage={"input_tokens": 1000, "output_tokens": 10})]), protocol, model="my-llama").run(ctx)
    assert outcome.status is AgentStatus.OK and outcome.calls[0].cost_usd == 0
    assert "no price is known for model 'my-llama'" in outcome.message


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [({"retry-after": "2"}, 2.0), ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5), ({"retry-after": "soon"}, None),
     ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0), ({}, None)],
)
def test_retry_after_headers(headers: dict, seconds: float | None) -> None:
    from evoci.agents.llm.client import retry_after_s

    assert retry_after_s(headers) == seconds


@pytest.mark.parametrize("protocol", ["openai"])  # Anthropic's tool input is an object on the wire: the SDK parses it
def test_tool_arguments_nested_too_deeply_go_back_to_the_model(serve, protocol, ctx: AgentContext) -> None:
    # json.loads raises RecursionError, not a decode error, on ~100,000 nested lists: before, that
    # escaped the agent loop and the node failed as the harness's fault, retried and left unscored.
    deep = "[" * 100_000 + "]" * 100_000
    server = serve([tool_call("read_file", deep), tool_call("read_file", {"path": "src/calc.py"}), text("ok")])
    outcome = programmer(server, protocol).run(ctx)
    assert outcome.status is AgentStatus.OK, outcome.message
    error, good = tool_messages(outcome)
    assert error["is_error"] and not good["is_error"]


def test_an_anthropic_tool_input_nested_too_deeply_is_a_model_error(serve, ctx: AgentContext) -> None:
    # Anthropic sends a tool_use input as JSON on the wire; the SDK reads the reply with json.loads,
    # which raised RecursionError out of the agent: the node failed as the harness's fault.
    deep = '{"path": ' * 100_000 + '"src/calc.py"' + "}" * 100_000
    server = serve([tool_call("read_file", deep), text("never sent")])
    outcome = programmer(server, "anthropic").run(ctx)
    assert outcome.status is AgentStatus.MODEL_ERROR, outcome.message
    assert "could not be read (nested too deeply)" in outcome.message
    assert len(server.requests) == 1 and outcome.calls[0].error  # the call is recorded, not retried


def test_a_number_too_long_to_read_is_the_models_error(serve, protocol, ctx: AgentContext) -> None:
    # json.loads raises a plain ValueError on a number of more than 4,300 digits: in tool arguments
    # (OpenAI's JSON text) it goes back to the model; in a reply the SDK reads (Anthropic's tool
    # input) it is a model error. Either way the agent's outcome, never an exception.
    arguments = '{"path": "src/calc.py", "start_line": ' + "1" * 5000 + "}"
    server = serve([tool_call("read_file", arguments), text("ok")])
    outcome = programmer(server, protocol).run(ctx)
    if protocol == "openai":
        assert outcome.status is AgentStatus.OK, outcome.message
        [error] = tool_messages(outcome)
        assert error["is_error"] and "Exceeds the limit (4300 digits)" in error["content"]
    else:
        assert outcome.status is AgentStatus.MODEL_ERROR and "could not be read (Exceeds the limit" in outcome.message
