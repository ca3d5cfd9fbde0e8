"""A scripted model that solves the built-in demo task, for ``ScriptedLLMServer``.

``demo_script()`` returns a callable script that plays both LLM roles over either wire
protocol, with tool calls the real agents execute, so the whole LLM path (SDKs, loop,
tools, validation, accounting) runs offline against the demo history
(``evoci.swe_ci.demo.HISTORY_DIR``: one folder per commit, base first, oracle last):

- **architect**: ``read_file`` of ``.evoci/non-passed/summary.jsonl``, then ``write_file``
  of a requirement.xml grouping the non-passed tests by module (at most 5), then a word.
- **programmer**: ``read_file`` of every non-test file the history ever touches; from
  their contents it finds the history state the workspace is in (the best-matching
  commit), then ``write_file``s the next commits' non-test files — ceil(commits / N) of
  them, N parsed from "of at most N" in its task, so the oracle's code is reached by
  iteration N — then a one-line summary.

The script keeps no state between requests: it reads where it is from the conversation
it is sent, so retries, re-runs and both protocols behave alike.
"""

from __future__ import annotations

import json
import math
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evoci.agents.base import NON_PASSED_DIR, REQUIREMENT_FILE
from evoci.agents.llm.tools import READ_WINDOW_LINES
from evoci.agents.requirement import MAX_ITEMS, render_requirements
from evoci.agents.scripted import ScriptedLLMServer, Spec, text, tool_calls
from evoci.demo_repo import HistoryStep, load_history
from evoci.domain import AgentConfig
from evoci.swe_ci.demo import HISTORY_DIR

SUMMARY = f"{NON_PASSED_DIR}/summary.jsonl"
DEMO_KEY_ENV = "EVOCI_SCRIPTED_API_KEY"  # any value: the scripted server ignores it


@dataclass
class _Conversation:
    """What the script needs from a request, whichever protocol it came in."""

    system: str = ""
    task: str = ""  # the first user message
    last_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (id, name, args)
    results: dict[str, str] = field(default_factory=dict)  # tool call id → result text


def demo_script(history: Path | None = None) -> Callable[[str, dict[str, Any]], Spec]:
    """The demo solver: a script for ``ScriptedLLMServer`` serving both protocols."""
    steps = load_history(history or HISTORY_DIR)

    def script(protocol: str, request: dict[str, Any]) -> Spec:
        convo = _parse(protocol, request)
        if "You are a senior software architect" in convo.system:
            return _architect(convo)
        return _programmer(convo, steps)

    return script


def demo_agent_config(server: ScriptedLLMServer, protocol: str = "openai") -> AgentConfig:
    """An ``llm`` AgentConfig for either role whose model is the demo solver behind ``server``.

    For ``protocol="anthropic"`` the SDK needs some key: set ``EVOCI_SCRIPTED_API_KEY``.
    """
    options = {"provider": "openai-compatible" if protocol == "openai" else "anthropic",
               "base_url": server.base_url(protocol), "api_key_env": DEMO_KEY_ENV,
               "price": {"input": 0, "output": 0}, "max_retries": 0}  # fmt: skip
    return AgentConfig(kind="llm", model="scripted-demo", options=options)


# -- the two roles -------------------------------------------------------------------------


def _architect(convo: _Conversation) -> Spec:
    names = [name for _, name, _ in convo.last_calls]
    if "write_file" in names:
        return text(f"{REQUIREMENT_FILE} written.")
    if "read_file" not in names:
        return tool_calls(("read_file", {"path": SUMMARY, "end_line": READ_WINDOW_LINES}))
    result = convo.results.get(convo.last_calls[names.index("read_file")][0], "")
    summary = [json.loads(line) for line in _lines(result) if line.startswith("{")]
    groups: OrderedDict[str, list[dict[str, str]]] = OrderedDict()
    for test in summary:
        groups.setdefault(test["test_id"].split("::", 1)[0], []).append(test)
    items = [_requirement(module, tests) for module, tests in list(groups.items())[:MAX_ITEMS]] or [
        {"location": "the package under src/", "description": "No target test is listed as non-passed.",
         "contract": "Keep the current behaviour.", "acceptance": "Every target test keeps passing."}  # fmt: skip
    ]
    return tool_calls(("write_file", {"path": REQUIREMENT_FILE, "content": render_requirements(items)}))


def _requirement(module: str, tests: list[dict[str, str]]) -> dict[str, str]:
    ids = [t["test_id"] for t in tests]
    reasons = sorted({t.get("reason", "") for t in tests} - {""})
    return {
        "location": f"the code exercised by {module}",
        "description": f"{len(ids)} test(s) in {module} do not pass; reasons: " + "; ".join(reasons[:5]),
        "contract": f"Behave as the tests in {module} specify.",
        "acceptance": "These tests pass: " + ", ".join(ids[:20]) + (" …" if len(ids) > 20 else ""),
    }


def _programmer(convo: _Conversation, steps: tuple[HistoryStep, ...]) -> Spec:
    names = [name for _, name, _ in convo.last_calls]
    paths = sorted({p for s in steps for p in [*s.files, *s.deletions] if not _is_test(p)})
    if "write_file" in names:
        return text(f"Implemented the requirement: wrote {len(names)} files.")
    if "read_file" not in names:
        return tool_calls(*[("read_file", {"path": p}) for p in paths])
    reads = [(args["path"], cid) for cid, name, args in convo.last_calls if name == "read_file"]
    seen = {path: _content(convo.results.get(cid, "")) for path, cid in reads}
    states = _states(steps)
    scores = [sum(_window(state.get(p)) == seen.get(p) for p in paths) for state in states]
    current = max(range(len(states)), key=lambda k: (scores[k], k))
    match = re.search(r"of at most (\d+)", convo.task)
    chunk = max(1, math.ceil((len(steps) - 1) / int(match.group(1)))) if match else 1
    target = min(current + chunk, len(states) - 1)
    if target == current:
        return text("The code already meets the requirement; nothing to change.")
    wanted = states[target]
    writes = [("write_file", {"path": p, "content": wanted.get(p, "")}) for p in paths
              if _window(wanted.get(p)) != seen.get(p) and (p in wanted or seen.get(p) is not None)]  # fmt: skip
    return tool_calls(*writes, text=f"Applying {', '.join(s.name for s in steps[current + 1 : target + 1])}.")


# -- the history ---------------------------------------------------------------------------


def _states(steps: tuple[HistoryStep, ...]) -> list[dict[str, str]]:
    """The full tree after each step (state 0 = the base), as text."""
    states: list[dict[str, str]] = []
    tree: dict[str, str] = {}
    for step in steps:
        files = {p: c.decode("utf-8", errors="replace") for p, c in step.files.items()}
        tree = {p: c for p, c in {**tree, **files}.items() if p not in step.deletions}
        states.append(tree)
    return states


def _is_test(path: str) -> bool:
    return path.startswith("tests/")


def _window(content: str | None) -> list[str] | None:
    """What read_file shows of ``content``: its first window of lines (None: no file)."""
    return None if content is None else content.splitlines()[:READ_WINDOW_LINES]


def _content(result: str) -> list[str] | None:
    """The lines a read_file result shows (None when the file does not exist)."""
    if result.startswith("error:"):
        return None
    if result.startswith("(") and result.endswith(" is empty)"):
        return []
    return _lines(result)


def _lines(result: str) -> list[str]:
    rows = result.splitlines()
    if rows and rows[-1].startswith("(lines "):
        rows = rows[:-1]
    return [row.split("\t", 1)[1] if "\t" in row else "" for row in rows]


def _parse(protocol: str, request: dict[str, Any]) -> _Conversation:
    convo = _Conversation()
    messages = request.get("messages") or []
    if protocol == "anthropic":
        system = request.get("system") or ""
        convo.system = system if isinstance(system, str) else "".join(b.get("text", "") for b in system)
        for m in messages:
            blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
            if m["role"] == "assistant":
                convo.last_calls = [(b["id"], b["name"], b.get("input") or {}) for b in blocks
                                    if b["type"] == "tool_use"]  # fmt: skip
                continue
            for b in blocks:
                if b["type"] == "text" and not convo.task:
                    convo.task = b["text"]
                elif b["type"] == "tool_result":
                    body = b.get("content")
                    if not isinstance(body, str):
                        body = "".join(x.get("text", "") for x in body or [])
                    convo.results[b["tool_use_id"]] = body
        return convo
    for m in messages:
        if m["role"] == "system":
            convo.system += m.get("content") or ""
        elif m["role"] == "user" and not convo.task:
            convo.task = m.get("content") or ""
        elif m["role"] == "assistant":
            convo.last_calls = [(c["id"], c["function"]["name"], _json(c["function"]["arguments"]))
                                for c in m.get("tool_calls") or []]  # fmt: skip
        elif m["role"] == "tool":
            convo.results[m["tool_call_id"]] = m.get("content") or ""
    return convo


def _json(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


__all__ = ["DEMO_KEY_ENV", "demo_agent_config", "demo_script"]
