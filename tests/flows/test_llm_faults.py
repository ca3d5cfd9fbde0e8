"""Model faults during a real flow run: each is a recorded, queryable outcome, and nothing crashes."""

from __future__ import annotations

import pytest

from evoci.agents.scripted import (ScriptedLLMServer, context_overflow, rate_limited, refusal, server_error, text,
                                   tool_call)
from evoci.domain import AgentConfig, RunConfig, TaskSpec
from evoci.flows.evolve import evolve
from tests.flows.helpers import fail_first_write, query
from tests.repos import CALC_V0, calc_repo

pytestmark = pytest.mark.usefixtures("prefect_server")

REQUIREMENT = ("<requirements><requirement><location>src/calc/__init__.py</location><description>add sub</description>"
               "<contract>sub(a, b) = a - b</contract><acceptance>test_sub passes</acceptance></requirement></requirements>")
U = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0}

SCRIPT = [
    # iteration 1, architect: a 429, a 500, then the requirement.
    rate_limited(0.5), server_error(500),
    tool_call("write_file", {"path": ".evoci/requirement.xml", "content": REQUIREMENT}, usage=U), text("written", usage=U),
    # iteration 1, programmer: malformed tool-call JSON (fed back as a tool error), then real work.
    tool_call("write_file", '{"path": "src/calc/__init__.py", "content": ', usage=U),
    tool_call("write_file", {"path": "src/calc/__init__.py", "content": CALC_V0 + "\ndef sub(a, b):\n    return a - b\n"},
              usage=U),
    text("implemented sub", usage=U),
    # iteration 2, architect: the context window overflows; iteration 3: a refusal.
    context_overflow(),
    {**refusal(), "usage": U},
]


def test_every_model_fault_is_a_recorded_outcome_and_totals_add_up(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    task = TaskSpec(task_id="calc-faults", repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")
    home = tmp_path / "home"
    with ScriptedLLMServer(SCRIPT) as server:
        agent = AgentConfig(kind="llm", model="gpt-4.1", options={
            "provider": "openai-compatible", "base_url": server.base_url("openai"), "max_retries": 2,
            "retry_backoff_s": 0.1, "price": {"input": 1.0, "output": 10.0}})
        summary = evolve(task, RunConfig(max_iterations=3, architect=agent, programmer=agent), home=str(home))
    db = home / "evoci.duckdb"
    assert (summary.status, summary.iterations, summary.passed) == ("done", 3, 3)
    assert query(db, "select iteration, architect_status, programmer_status from iterations where iteration > 0 "
                     "order by iteration") == [(1, "ok", "ok"), (2, "model_error", "invalid_output"),
                                               (3, "model_error", "invalid_output")]
    errors = query(db, "select iteration, role, call_index, error is not null from agent_calls order by iteration, role, call_index")
    assert errors == [(1, "architect", 0, True), (1, "architect", 1, True), (1, "architect", 2, False),
                      (1, "architect", 3, False), (1, "programmer", 0, False), (1, "programmer", 1, False),
                      (1, "programmer", 2, False), (2, "architect", 0, True), (3, "architect", 0, False)]
    messages = dict(query(db, "select iteration, message from trajectories where role = 'architect' and iteration > 1"))
    assert "context" in messages[2].lower() and "refus" in messages[3].lower()
    # Six answered calls (the refusal is an answer) of 100 in / 10 out at $1 / $10 per 1M tokens; 3 failed calls.
    [(tokens_in, tokens_out, cost, failed)] = query(db, "select input_tokens, output_tokens, cost_usd, errors from cost_by_run")
    assert (tokens_in, tokens_out, failed) == (600, 60, 3)
    assert cost == pytest.approx(6 * (100 * 1.0 + 10 * 10.0) / 1_000_000)
    # The malformed tool call went back to the model as a tool error; the loop went on.
    [(trajectory,)] = query(db, "select trajectory::varchar from trajectories where iteration = 1 and role = 'programmer'")
    assert "error" in trajectory.lower()


def test_calls_paid_for_before_an_infrastructure_failure_are_kept_and_the_retry_is_counted_too(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    task = TaskSpec(task_id="calc-interrupted", repo=str(calc_repo(tmp_path / "calc")), base_ref="base",
                    oracle_ref="oracle")
    # The architect's first try makes one paid call, then its workspace write fails (infrastructure);
    # the retried node makes two calls and succeeds.
    script = [tool_call("write_file", {"path": ".evoci/requirement.xml", "content": REQUIREMENT}, usage=U),
              tool_call("write_file", {"path": ".evoci/requirement.xml", "content": REQUIREMENT}, usage=U),
              text("written", usage=U),
              tool_call("write_file", {"path": "src/calc/__init__.py",
                                       "content": CALC_V0 + "\ndef sub(a, b):\n    return a - b\n"}, usage=U),
              text("done", usage=U)]
    fail_first_write(monkeypatch, ".evoci/requirement.xml")
    home = tmp_path / "home"
    with ScriptedLLMServer(script) as server:
        agent = AgentConfig(kind="llm", model="gpt-4.1", options={
            "provider": "openai-compatible", "base_url": server.base_url("openai"), "max_retries": 0,
            "price": {"input": 1.0, "output": 10.0}})
        evolve(task, RunConfig(max_iterations=1, architect=agent, programmer=agent, retry_delays_s=[0.1]),
               home=str(home))
    db = home / "evoci.duckdb"
    assert query(db, "select role, node_try, count(*) from agent_calls group by all order by all") == [
        ("architect", 1, 1), ("architect", 2, 2), ("programmer", 1, 2)]
    assert query(db, "select calls, input_tokens from cost_by_run") == [(5, 500)]
