"""An agent CLI behind the model gateway in a real SWE-CI flow: an outage is infrastructure, never a score.

The architect and the programmer are ``command`` agents whose CLI streams Chat Completions through
the gateway (it only knows ``OPENAI_BASE_URL`` and a dummy key). The programmer, like aider, writes
half its change, meets an upstream that keeps answering 500, and exits 0 anyway: the gateway's
verdict fails the node, Prefect retries it from its input commit, and the committed iteration holds
the whole change and none of the half. The console shows each role's status and lists the
attempt that did not end ok.
"""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from evoci.agents.scripted import ScriptedLLMServer, server_error, text
from evoci.domain import AgentConfig, RunConfig, TaskSpec
from evoci.flows.evolve import evolve
from evoci.report import print_report
from evoci.workspace import Workspace
from tests.flows.helpers import query
from tests.repos import CALC_V0, calc_repo

pytestmark = pytest.mark.usefixtures("prefect_server")

REQUIREMENT = ("<requirements><requirement><location>src/calc/__init__.py</location><description>add sub</description>"
               "<contract>sub(a, b) = a - b</contract><acceptance>test_sub passes</acceptance></requirement></requirements>")
U = {"input_tokens": 100, "output_tokens": 10, "cached_tokens": 0}
ASK = """
import json, os, sys, urllib.request
def ask():
    body = {"model": "gpt-4.1", "stream": True, "messages": [{"role": "user", "content": open(".evoci/prompt.md").read()}]}
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", json.dumps(body).encode(),
                                     {"content-type": "application/json",
                                      "authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
    with urllib.request.urlopen(request, timeout=60) as answer:
        return answer.read().decode()
"""
ARCHITECT = ASK + f"ask()\nopen('.evoci/requirement.xml', 'w').write({REQUIREMENT!r})\n"
PROGRAMMER = ASK + f"""
ask()
open('src/calc/__init__.py', 'w').write({CALC_V0!r} + '\\nHALF_DONE = True\\n')
try:
    ask()
except Exception as exc:  # as aider does: report, and exit 0
    print('gave up:', exc)
    sys.exit(0)
open('src/calc/__init__.py', 'w').write({CALC_V0!r} + '\\ndef sub(a, b):\\n    return a - b\\n')
sys.exit(2)  # done, yet it complains: an agent outcome the console lists
"""


def literal(code: str) -> str:
    """``code`` as a command-template word: its braces are not placeholders."""
    return code.replace("{", "{{").replace("}", "}}")


def test_an_outage_mid_programmer_retries_the_node_and_commits_nothing_half_done(tmp_path, monkeypatch):
    monkeypatch.setenv("GATEWAY_FLOW_KEY", "sk-flow-secret")
    task = TaskSpec(task_id="calc-outage", repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")
    # Requests: 1 architect; 2 programmer (answered); 3, 4 the upstream is down (a retry of the call);
    # the node is retried: 5, 6 answered.
    replies = {1: text("plan", usage=U), 2: text("step one", usage=U), 3: server_error(500), 4: server_error(503),
               5: text("step one", usage=U), 6: text("step two", usage=U)}
    with ScriptedLLMServer(lambda protocol, body: replies[len(server.requests)]) as server:
        gateway = {"provider": "openai", "base_url": server.base_url("openai"), "api_key_env": "GATEWAY_FLOW_KEY",
                   "max_retries": 1, "retry_backoff_s": 0.01, "price": {"input": 1.0, "output": 10.0}}
        architect = AgentConfig(kind="command", options={"command": ["python3", "-c", literal(ARCHITECT)], "gateway": gateway})
        programmer = AgentConfig(kind="command", options={"command": ["python3", "-c", literal(PROGRAMMER)], "gateway": gateway})
        home = tmp_path / "home"
        summary = evolve(task, RunConfig(max_iterations=1, architect=architect, programmer=programmer),
                         home=str(home))
    assert len(server.requests) == 6
    assert all(r.headers.get("authorization") == "Bearer sk-flow-secret" for r in server.requests)
    db = home / "evoci.duckdb"
    assert summary.status == "done"
    assert query(db, "select architect_status, programmer_status from iterations where iteration = 1") == [
        ("ok", "model_error")]
    [workspace] = (home / "runs").glob("*/calc-outage/workspace")
    committed = Workspace(workspace).git.show("HEAD:src/calc/__init__.py")
    assert "def sub" in committed and "HALF_DONE" not in committed
    rows = query(db, "select role, node_try, call_index, input_tokens, error is not null from agent_calls "
                     "order by role, node_try, call_index")
    assert rows == [("architect", 1, 0, 100, False),
                    ("programmer", 1, 0, 100, False), ("programmer", 1, 1, 0, True), ("programmer", 1, 2, 0, True),
                    ("programmer", 2, 0, 100, False), ("programmer", 2, 1, 100, False)]
    [(calls, tokens_in, errors, cost)] = query(db, "select calls, input_tokens, errors, cost_usd from cost_by_run")
    assert (calls, tokens_in, errors) == (6, 400, 2)
    assert cost == pytest.approx(4 * (100 * 1.0 + 10 * 10.0) / 1_000_000)
    console = Console(file=io.StringIO(), width=250)
    print_report(db, summary.run_id, console=console)
    shown = console.file.getvalue()
    assert re.search(r"│ +1 │ ok +│ model_error +│ ok", shown), shown  # iteration 1: architect, programmer, tests
    assert re.search(r"calc-outage │ 1 +│ programmer │ model_error │ the command exited with code 2", shown), shown
    transcripts = sorted((home / "runs").glob("*/calc-outage/artifacts/gateway/*.jsonl"))
    assert sorted(len(t.read_text().splitlines()) for t in transcripts) == [1, 2, 3]
