"""Names, text and replies no file system or program takes, sent by a model, through the real flows.

A path is the agent's text: a NUL, a name over 255 bytes, ``.`` or a folder where a file is
meant, content with a lone surrogate; so are a search pattern and a number in tool arguments. Where evoci handed such text to the system (an LLM tool,
NITR writing an API-mode answer), the system's ``ValueError`` or ``OSError`` escaped the node: it
failed as if the harness had, was retried, and the task ended unscored, an outcome the agent
chose. The same for a reply the model API's SDK cannot read (an Anthropic tool input nested past
Python's recursion limit). Each is now the agent's recorded outcome, and the task is scored.
"""

from __future__ import annotations

import json
import threading

import pytest

from evoci.agents.scripted import ScriptedLLMServer, text, tool_call
from evoci.swe_ci.scripted_demo import DEMO_KEY_ENV, demo_agent_config, demo_script
from evoci.domain import AgentConfig, RunConfig
from evoci.flows.evolve import evolve
from evoci.flows.nitr import nitr
from evoci.swe_ci.demo import demo_task
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

# Tool calls no file system or program takes; each raised out of the agent loop before.
HOSTILE_CALLS = [
    ("read_file", {"path": "a" * 300}),  # ENAMETOOLONG
    ("write_file", {"path": "src/" + "b" * 300 + ".py", "content": "x = 1\n"}),
    ("write_file", {"path": ".", "content": "x"}),  # ValueError: the workspace root as a file
    ("write_file", {"path": "", "content": "x"}),
    ("search_text", {"pattern": "def\0"}),  # ValueError: embedded null byte
    ("search_text", {"pattern": "x" * 200_000}),  # E2BIG, taken for the sandbox's failure
    ("read_file", {"path": "README.md/inner"}),  # ENOTDIR: a path through a file
    ("read_file", {"path": "../workspace/README.md"}),  # out and back in: ValueError from the sandbox
    ("read_file", '{"path": "README.md", "start_line": ' + "1" * 5000 + "}"),  # json.loads: a plain ValueError
]


def _solved_architect(solver, sent):
    def script(wire: str, request: dict):
        if "You are a senior software architect" in str(request):
            return solver(wire, request)
        sent.append(request)
        if len(sent) <= len(HOSTILE_CALLS):
            return tool_call(*HOSTILE_CALLS[len(sent) - 1])
        return text("I stop here.")
    return script


def test_llm_tool_arguments_no_system_takes_are_the_models_errors_and_the_task_is_scored(
        tmp_path, monkeypatch, redteam_home):
    monkeypatch.setenv(DEMO_KEY_ENV, "sk-evoci-test-key")
    sent: list[dict] = []
    with ScriptedLLMServer(_solved_architect(demo_script(), sent)) as server:
        agent = demo_agent_config(server, "openai")
        summary = evolve(demo_task(tmp_path / "demo"), RunConfig(max_iterations=1, architect=agent, programmer=agent),
                         home=str(redteam_home))
    db = redteam_home / "evoci.duckdb"
    assert len(sent) == len(HOSTILE_CALLS) + 1  # every call answered, the loop went on
    told = [m["content"] for m in sent[-1]["messages"] if m["role"] == "tool"]
    assert len(told) == len(HOSTILE_CALLS), told
    assert all(t.startswith("error: ") or "are not valid JSON" in t for t in told), told
    assert summary.status == "done"
    assert query(db, "select count(*) from failures") == [(0,)]  # nothing taken for the harness's fault
    assert query(db, "select programmer_status from iterations where iteration = 1") == [("ok",)]
    [(evoscore,)] = query(db, "select evoscore from evoscore(gamma := 1.0)")
    assert evoscore is not None


def test_an_anthropic_tool_input_too_deep_to_read_is_a_model_error_and_the_task_is_scored(
        tmp_path, monkeypatch, redteam_home):
    monkeypatch.setenv(DEMO_KEY_ENV, "sk-evoci-test-key")
    solver, sent = demo_script(), []
    deep = '{"path": ' * 100_000 + '"src/calc.py"' + "}" * 100_000  # the SDK's json.loads: RecursionError

    def script(wire: str, request: dict):
        if "You are a senior software architect" in str(request):
            return solver(wire, request)
        sent.append(request)
        return tool_call("read_file", deep)

    with ScriptedLLMServer(script) as server:
        agent = demo_agent_config(server, "anthropic")
        summary = evolve(demo_task(tmp_path / "demo"), RunConfig(max_iterations=1, architect=agent, programmer=agent),
                         home=str(redteam_home))
    db = redteam_home / "evoci.duckdb"
    assert len(sent) == 1 and summary.status == "done"
    assert query(db, "select count(*) from failures") == [(0,)]
    assert query(db, "select programmer_status from iterations where iteration = 1") == [("model_error",)]
    [(evoscore,)] = query(db, "select evoscore from evoscore(gamma := 1.0)")
    assert evoscore is not None


# One file of the answer no tree can hold; each raised while evoci wrote the answer before.
BAD_FILES = [
    ("src/invoice\0.py", "x"),  # ValueError: embedded null byte
    ("src/" + "v" * 300 + ".py", "x"),  # ENAMETOOLONG
    (".", "x"),  # ValueError: the tree's root as a file
    ("src/settings.py", "RETRIES = '\udcff'\n"),  # UnicodeEncodeError: a lone surrogate
]
PROBES = ["001", "002", "003", "004"]


def test_nitr_api_answers_with_files_no_tree_can_hold_are_invalid_output_and_every_probe_is_scored(
        monkeypatch, redteam_home):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    answered: list[str] = []
    lock = threading.Lock()  # probes may run side by side

    def answer(protocol: str, body: dict):
        with lock:  # each kind at least once: one call per step, four probes
            name, content = BAD_FILES[len(answered) % len(BAD_FILES)]
            answered.append(name)
        files = [{"filename": "NOTES.md", "content": "first, a good file\n"}, {"filename": name, "content": content}]
        return text(json.dumps({"files": files}))  # the surrogate travels as JSON's "\\udcff"

    with ScriptedLLMServer(answer) as server:
        agent = AgentConfig(kind="api", model="gpt-4.1", options={
            "provider": "openai", "base_url": server.base_url("openai"), "max_retries": 0, "timeout_s": 10})
        config = RunConfig(run_id="untrusted-names", protocol="nitr", programmer=agent, architect=agent,
                           node_retries=0)
        db = redteam_home / "evoci.duckdb"
        nitr("builtin", config, select={"id": PROBES}, home=str(redteam_home), db=str(db))
    assert len(answered) >= len(BAD_FILES)
    rows = query(db, "select task_id, programmer_status from iterations where run_id = 'untrusted-names'")
    assert len({task for task, _ in rows}) == len(PROBES), rows
    assert {status for _, status in rows} == {"invalid_output"}, rows
    assert query(db, "select count(*) from failures where run_id = 'untrusted-names'") == [(0,)]
    categories = query(db, "select task_id, category from nitr_probes where run_id = 'untrusted-names'")
    assert len(categories) == len(PROBES) and all(category for _, category in categories), categories
