"""Complete accounting: every model call the provider answered is in `cost_by_run` exactly once, across a
served run killed during paid calls, its resume, and the UI's Retry of a node that failed after paying.

The story runs as a user operates evoci: `evoci serve` registers the deployment and a run starts from it;
the serving process is killed (SIGKILL, no cleanup) while a call is in flight; a second `evoci serve`
picks the run up again when the UI's Retry is sent; its programmer fails after its calls were paid; and a
second Retry runs only that node again. All of it is one flow run, so one evoci run id.
"""

from __future__ import annotations

import os
import signal

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.deployments.retry import retry_flow_run
from evoci.domain import AgentConfig, RunConfig
from evoci.settings import Paths
from tests.deployments.serving import serve, stop, wait_for
from tests.flows.helpers import query
from tests.repos import CALC_V0, calc_repo, write_dataset

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

REQUIREMENT = ("<requirements><requirement><location>src/calc/__init__.py</location><description>add sub</description>"
               "<contract>sub(a, b) = a - b</contract><acceptance>test_sub passes</acceptance></requirement></requirements>")
U = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0}
PRICE = {"input": 1.0, "output": 10.0}  # USD per 1M tokens: one answered call costs $0.0002
WRITE_REQUIREMENT = tool_call("write_file", {"path": ".evoci/requirement.xml", "content": REQUIREMENT}, usage=U)
WRITE_CODE = tool_call("write_file", {"path": "src/calc/__init__.py", "content": CALC_V0 + "\ndef sub(a, b):\n    return a - b\n"},
                       usage=U)
NAME = "accounting"


def _final_run(flow_run_id, min_run_count: int = 1):
    from prefect import get_client

    with get_client(sync_client=True) as client:
        run = client.read_flow_run(flow_run_id)
    return run if run.state.is_final() and run.run_count >= min_run_count else None


def test_calls_of_a_killed_run_its_resume_and_a_ui_retry_are_each_counted_once(tmp_path, monkeypatch, prefect_server):
    from prefect.deployments import run_deployment

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the served processes inherit it
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "calc.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    home = tmp_path / "home"
    serving: list = []
    answered: list[int] = []

    # Requests in order: 1 paid; 2 arrives while the first serving process is killed (never answered); the
    # resume redoes the architect (3, 4), and its programmer pays for 5 and 6 before the node fails; the UI's
    # Retry runs only the programmer again (7, 8).
    replies = [WRITE_REQUIREMENT, None, WRITE_REQUIREMENT, text("written", usage=U), WRITE_CODE, text("done", usage=U),
               WRITE_CODE, text("done", usage=U)]

    def script(protocol, body):
        number = len(server.requests)
        if number == 2:
            os.killpg(serving[0].pid, signal.SIGKILL)  # SIGKILL mid-node: no handler, no cleanup
            serving[0].wait()
            return text("nobody is listening", usage=U)
        answered.append(number)
        return replies[number - 1]

    with ScriptedLLMServer(script) as server:
        agent = AgentConfig(kind="llm", model="gpt-4.1", options={
            "provider": "openai-compatible", "base_url": server.base_url("openai"), "max_retries": 0, "price": PRICE})
        config = RunConfig(max_iterations=1, architect=agent, programmer=agent, node_retries=0).model_dump(mode="json")
        args = (str(dataset), "--name", NAME, "--no-schedule", "--home", str(home))

        serving.append(serve(prefect_server, tmp_path / "serve-1", *args))
        try:
            run = run_deployment(f"benchmark/{NAME}", parameters={"config": config}, timeout=0)
            wait_for("the serving process to be killed mid-call", lambda: serving[0].poll() is not None, 300)
        finally:
            stop(serving[0])

        # The run is left Running with nobody serving it: a user starts `evoci serve` again and retries it.
        resumed = serve(prefect_server, tmp_path / "serve-2", *args, env={"EVOCI_INJECT_FAULTS": "programmer-paid@1"})
        try:
            retry_flow_run(run.id)  # what the UI's Retry button sends
            failed = wait_for("the resumed run to fail after paying", lambda: _final_run(run.id, min_run_count=2), 300)
            retry_flow_run(run.id)
            retried = wait_for("the retried run to finish", lambda: _final_run(run.id, min_run_count=3), 300)
        finally:
            stop(resumed)

    assert failed.state.is_failed(), failed.state.message
    assert retried.state.is_completed(), retried.state.message
    assert answered == [1, 3, 4, 5, 6, 7, 8]
    db = Paths.of(str(home)).results_db()
    assert query(db, "select role, count(*), count(distinct node_run) from agent_calls group by role order by role") == [
        ("architect", 3, 2), ("programmer", 4, 2)]
    [(calls, tokens_in, cost)] = query(db, "select calls, input_tokens, cost_usd from cost_by_run")
    assert (calls, tokens_in) == (len(answered), 100 * len(answered))
    assert cost == pytest.approx(len(answered) * (100 * PRICE["input"] + 10 * PRICE["output"]) / 1_000_000)
    [(status,)] = query(db, "select status from tasks")
    assert status == "done"
