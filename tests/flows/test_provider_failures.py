"""Provider failures are not agent outcomes: a rejected key, model or endpoint stops the run as an input
error, and an outage that outlasts the retries is infrastructure — neither is ever scored."""

from __future__ import annotations

import pytest

from evoci.agents.scripted import ScriptedLLMServer, rejected, server_error
from evoci.domain import AgentConfig, RunConfig, TaskSpec
from evoci.errors import ProviderRejected, ProviderUnavailable
from evoci.flows.benchmark import benchmark
from evoci.flows.evolve import evolve
from tests.flows.helpers import query
from tests.repos import calc_repo, write_dataset

pytestmark = pytest.mark.usefixtures("prefect_server")


def llm(server: ScriptedLLMServer, **options) -> AgentConfig:
    return AgentConfig(kind="llm", model="gpt-4.1", options={
        "provider": "openai-compatible", "base_url": server.base_url("openai"), "retry_backoff_s": 0.01,
        "price": {"input": 1.0, "output": 10.0}, **options})


def test_a_rejected_key_stops_the_run_before_anything_is_scored(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    calc_repo(tmp_path / "calc")
    line = {"repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}
    dataset = write_dataset(tmp_path / "tasks.jsonl", [{"task_id": "first", **line}, {"task_id": "second", **line}])
    home = tmp_path / "home"
    db = home / "evoci.duckdb"
    with ScriptedLLMServer(lambda protocol, body: rejected(401)) as server:
        agent = llm(server, max_retries=3)
        config = RunConfig(max_iterations=2, architect=agent, programmer=agent, concurrency=1)
        with pytest.raises(ProviderRejected, match="rejected the request .*HTTP 401.*check the API key"):
            benchmark(str(dataset), config, home=str(home))
    assert len(server.requests) == 1  # never retried, and the second task never started
    assert query(db, "select task_id, status from tasks") == [("first", "input_error")]
    assert query(db, "select task_id, node, kind from failures") == [("first", "agent", "input")]
    assert query(db, "select task_id, reason from swe_ci_tasks") == [("first", "input_error")]
    assert query(db, "select n_scored, evoscore from swe_ci_evoscore_runs") == [(0, None)]
    assert query(db, "select count(*), count(error) from agent_calls") == [(1, 1)]  # the rejected call is on record


def test_an_outage_that_outlasts_every_retry_leaves_the_task_unscored_never_zero(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    task = TaskSpec(task_id="calc", repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")
    home = tmp_path / "home"
    db = home / "evoci.duckdb"
    with ScriptedLLMServer(lambda protocol, body: server_error(500)) as server:
        agent = llm(server, max_retries=1)
        config = RunConfig(max_iterations=2, architect=agent, programmer=agent, node_retries=1, retry_delays_s=[0.1])
        with pytest.raises(ProviderUnavailable, match="kept failing after 1 retries"):
            evolve(task, config, home=str(home))
    # Two node tries (Prefect retried the infrastructure failure) of two calls each, every one recorded.
    assert len(server.requests) == 4
    assert query(db, "select count(*), count(distinct node_run) from agent_calls") == [(4, 2)]
    assert query(db, "select status from tasks") == [("infra_error",)]
    assert query(db, "select scored, reason from swe_ci_tasks") == [(False, "infra_error")]
    assert query(db, "select count(*) from iterations where iteration > 0") == [(0,)]
    assert query(db, "select n_scored, n_unscored, evoscore from swe_ci_evoscore_runs") == [(0, 1, None)]
