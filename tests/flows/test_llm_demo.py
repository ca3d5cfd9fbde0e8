"""The demo evolved by LLM agents (real openai/anthropic SDKs against a loopback server)."""

from __future__ import annotations

import pytest

from evoci.agents.scripted import ScriptedLLMServer
from evoci.swe_ci.scripted_demo import DEMO_KEY_ENV, demo_agent_config, demo_script
from evoci.domain import RunConfig
from evoci.flows.evolve import evolve
from evoci.swe_ci.demo import demo_task
from tests.flows.helpers import query, with_usage

pytestmark = pytest.mark.usefixtures("prefect_server")

SECRET = "sk-evoci-test-SECRET-7f3a91"
USAGE = {"input_tokens": 1000, "output_tokens": 50, "cached_tokens": 200}
PRICE = {"input": 2.0, "cached_input": 0.5, "output": 8.0}  # USD per 1M tokens
COST_PER_CALL = (800 * 2.0 + 200 * 0.5 + 50 * 8.0) / 1_000_000


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_llm_architect_and_programmer_solve_the_demo_and_every_call_is_accounted(tmp_path, monkeypatch, protocol):
    monkeypatch.setenv(DEMO_KEY_ENV, SECRET)
    calls: list[str] = []
    home = tmp_path / "home"
    with ScriptedLLMServer(with_usage(demo_script(), USAGE, calls)) as server:
        agent = demo_agent_config(server, protocol)
        agent = agent.model_copy(update={"options": {**agent.options, "price": PRICE}})
        config = RunConfig(max_iterations=5, architect=agent, programmer=agent)
        summary = evolve(demo_task(tmp_path / "demo"), config, home=str(home))
        auth_headers = [r.headers for r in server.requests]

    db = home / "evoci.duckdb"
    assert (summary.status, summary.passed, summary.targets) == ("done", 93, 93)
    # Real progress: N = 5, so the solver implements two history commits per iteration.
    assert [n for (n,) in query(db, "select n_passed from swe_ci_iterations order by iteration")] == [23, 43, 58, 69, 87, 93]
    assert {wire for wire in calls} == {protocol}

    [(n, tokens_in, tokens_out, cached, cost)] = query(
        db, "select calls, input_tokens, output_tokens, cached_tokens, cost_usd from cost_by_run")
    assert (n, tokens_in, tokens_out, cached) == (len(calls), 1000 * len(calls), 50 * len(calls), 200 * len(calls))
    assert cost == pytest.approx(COST_PER_CALL * len(calls))
    assert query(db, "select distinct role from agent_calls order by role") == [("architect",), ("programmer",)]

    # The key went only into the requests' auth headers: never into results, logs or the workspace.
    assert any(SECRET in " ".join(h.values()) for h in auth_headers)
    con_dump = query(db, """select string_agg(t::varchar, ' ') from (
        select * from agent_calls union all by name select * from trajectories
        union all by name select * from runs union all by name select * from failures) t""")
    assert SECRET not in str(con_dump)
    leaked = [p for p in home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []
