"""A run killed mid-node behind the gateway, then resumed, counts every answered call once.

`evoci run` with command agents behind the gateway is killed (SIGKILL, no cleanup) while the
programmer's second call is in flight; `evoci run` again resumes the run. The calls answered
before the kill were recorded as they were answered (keyed by the killed node execution), the
resumed node's calls by its own: `cost_by_run` holds each answered call exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text
from tests.flows.helpers import query
from tests.repos import CALC_V0, calc_repo, write_dataset

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

U = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0}
REQUIREMENT = ("<requirements><requirement><location>src/calc/__init__.py</location><description>add sub</description>"
               "<contract>sub(a, b) = a - b</contract><acceptance>test_sub passes</acceptance></requirement></requirements>")
ASK = """
import json, os, urllib.request
def ask():
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "go"}]}
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    return urllib.request.urlopen(request, timeout=120).read()
"""
ARCHITECT = ASK + f"ask()\nopen('.evoci/requirement.xml', 'w').write({REQUIREMENT!r})\n"
PROGRAMMER = ASK + f"ask()\nask()\nopen('src/calc/__init__.py', 'w').write({CALC_V0!r} + 'def sub(a, b):\\n    return a - b\\n')\n"


def test_a_killed_and_resumed_run_counts_every_answered_call_once(tmp_path, prefect_server):
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    home = tmp_path / "home"
    running: list[subprocess.Popen] = []
    answered: list[int] = []

    def script(protocol, body):
        number = len(server.requests)
        if number == 3:  # the programmer's second call: kill the run while it waits
            os.killpg(running[0].pid, signal.SIGKILL)
            running[0].wait()
            return text("nobody is listening", usage=U)
        answered.append(number)
        return text("ok", usage=U)

    with ScriptedLLMServer(script) as server:
        gateway = ('gateway={"provider": "openai", "base_url": "%s", "api_key_env": "RESUME_KEY", "max_retries": 0, '
                   '"price": {"input": 1.0, "output": 10.0}}' % server.base_url("openai"))
        env = {**{k: v for k, v in os.environ.items() if k not in ("EVOCI_HOME", "EVOCI_DB", "EVOCI_INJECT_FAULTS")},
               "PREFECT_API_URL": prefect_server, "RESUME_KEY": "sk-resume"}
        argv = [sys.executable, "-m", "evoci.cli", "run", str(dataset), "--max-iterations", "1", "--home", str(home),
                "--agent", "command", "--agent-option", gateway,
                "--agent-option", "env=" + json.dumps({"ARCHITECT": ARCHITECT, "PROGRAMMER": PROGRAMMER}), "--agent-option",
                'command=["python", "-c", "import os; exec(os.environ[\'{role}\'.upper()])"]']
        for attempt in range(2):
            running.insert(0, subprocess.Popen(argv, env=env, cwd=tmp_path, start_new_session=True,
                                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            output, _ = running[0].communicate(timeout=900)
            if attempt == 0:
                assert running[0].returncode == -signal.SIGKILL, output
        assert running[0].returncode == 0, output
    # Answered: 1 architect, 2 programmer (killed run); the resumed run answers the rest.
    assert answered[:2] == [1, 2] and 3 not in answered
    db = home / "evoci.duckdb"
    [(programmer_calls, programmer_nodes)] = query(
        db, "select count(*), count(distinct node_run) from agent_calls where role = 'programmer'")
    assert (programmer_calls, programmer_nodes) == (3, 2)  # 1 of the killed node + 2 of the resumed one
    [(calls, tokens_in, cost)] = query(db, "select calls, input_tokens, cost_usd from cost_by_run")
    assert (calls, tokens_in) == (len(answered), 100 * len(answered))
    assert cost == pytest.approx(len(answered) * (100 * 1.0 + 10 * 10.0) / 1_000_000)
    assert query(db, "select status from tasks") == [("done",)]
