"""Complete accounting: every model call the provider answered is in `cost_by_run` exactly once, across a
run killed during paid calls, its resume, and a retry of a node that failed after paying."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.domain import AgentConfig, RunConfig, TaskSpec
from evoci.errors import SandboxError
from evoci.flows.evolve import evolve
from tests.flows.helpers import fail_first_write, query
from tests.repos import CALC_V0, calc_repo

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

REQUIREMENT = ("<requirements><requirement><location>src/calc/__init__.py</location><description>add sub</description>"
               "<contract>sub(a, b) = a - b</contract><acceptance>test_sub passes</acceptance></requirement></requirements>")
U = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0}
PRICE = {"input": 1.0, "output": 10.0}  # USD per 1M tokens: one answered call costs $0.0002
WRITE_REQUIREMENT = tool_call("write_file", {"path": ".evoci/requirement.xml", "content": REQUIREMENT}, usage=U)
WRITE_CODE = tool_call("write_file", {"path": "src/calc/__init__.py", "content": CALC_V0 + "\ndef sub(a, b):\n    return a - b\n"},
                       usage=U)
RUN = textwrap.dedent("""
    import sys
    from evoci.domain import RunConfig, TaskSpec
    from evoci.flows.evolve import evolve
    evolve(TaskSpec.model_validate_json(sys.argv[1]), RunConfig.model_validate_json(sys.argv[2]), home=sys.argv[3])
""")


def test_calls_of_a_killed_run_its_resume_and_a_retried_node_are_each_counted_once(tmp_path, monkeypatch,
                                                                                    prefect_server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    task = TaskSpec(task_id="calc", repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")
    home = tmp_path / "home"
    first_run: list[subprocess.Popen] = []
    answered: list[int] = []

    # Requests in order: 1 paid, 2 arrives while the first run is killed (never answered); the resume
    # redoes the architect (3, 4) and pays for 5 before its workspace write fails; the retry pays 6, 7.
    replies = [WRITE_REQUIREMENT, None, WRITE_REQUIREMENT, text("written", usage=U), WRITE_CODE, WRITE_CODE,
               text("done", usage=U)]

    def script(protocol, body):
        number = len(server.requests)
        if number == 2:
            os.killpg(first_run[0].pid, signal.SIGKILL)  # SIGKILL mid-node: no handler, no cleanup
            first_run[0].wait()
            return text("nobody is listening", usage=U)
        answered.append(number)
        return replies[number - 1]

    with ScriptedLLMServer(script) as server:
        agent = AgentConfig(kind="llm", model="gpt-4.1", options={
            "provider": "openai-compatible", "base_url": server.base_url("openai"), "max_retries": 0, "price": PRICE})
        config = RunConfig(max_iterations=1, architect=agent, programmer=agent, node_retries=0)
        first_run.append(subprocess.Popen(
            [sys.executable, "-c", RUN, task.model_dump_json(), config.model_dump_json(), str(home)],
            env={**os.environ, "PREFECT_API_URL": prefect_server}, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        assert first_run[0].wait(timeout=600) == -signal.SIGKILL

        fail_first_write(monkeypatch, "src/calc/__init__.py")
        with pytest.raises(SandboxError):
            evolve(task, config, home=str(home))  # the resume: the programmer node fails after paying
        summary = evolve(task, config, home=str(home))  # the retry: only the programmer node runs again

    assert summary.status == "done"
    assert answered == [1, 3, 4, 5, 6, 7]
    db = home / "evoci.duckdb"
    assert query(db, "select role, count(*), count(distinct node_run) from agent_calls group by role order by role") == [
        ("architect", 3, 2), ("programmer", 3, 2)]
    [(calls, tokens_in, cost)] = query(db, "select calls, input_tokens, cost_usd from cost_by_run")
    assert (calls, tokens_in) == (len(answered), 100 * len(answered))
    assert cost == pytest.approx(len(answered) * (100 * PRICE["input"] + 10 * PRICE["output"]) / 1_000_000)
