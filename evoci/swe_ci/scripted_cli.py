"""A scripted model that drives the real agent CLIs through the demo, for ``ScriptedLLMServer``.

``cli_script(cli)`` plays both SWE-CI roles for one preset (and NITR's read-only mode) the way
that CLI acts, so the tests run the real CLI through the real flow with no model:

- CLIs with a shell tool (Claude Code's ``Bash``, OpenCode's and mini-swe-agent's ``bash``,
  Codex's shell): the **architect** runs one command that writes a requirement.xml; the
  **programmer** first asks for ``sha256sum`` of every non-test file the demo history touches,
  finds the history state the workspace is in, then writes the next commits' files (base64
  through the shell, so no quoting can break them). Then it answers in words (mini-swe-agent:
  its submit command).
- aider (no tools: it edits from the reply): the whole new content of each file, in aider's
  "whole" edit format; the programmer finds the state from the files aider put in the chat.
- read-only mode (NITR): the answer is ``{"files": [...]}`` with the probe's first source file
  unchanged plus one new file, so the materializing path runs.

Markers the commands print are split in the command text (``EVOCI""-SHA``), so the script sees
a command's *output*, never its own command, whatever the CLI echoes back. The script keeps no
state between requests: it reads where it is from the request it is sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evoci.agents.base import REQUIREMENT_FILE
from evoci.agents.requirement import render_requirements
from evoci.agents.scripted import Spec, text, tool_call
from evoci.demo_repo import load_history
from evoci.swe_ci.demo import HISTORY_DIR

SHELL_TOOLS = ("Bash", "bash", "shell", "shell_command", "exec_command")
SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent ends when a command prints this first
REQUIREMENT = render_requirements([{
    "location": "the package under src/",
    "description": "Make the listed non-passed target tests pass.",
    "contract": "Behave as the tests in .evoci/non-passed specify.",
    "acceptance": "The non-passed target tests pass.",
}])  # fmt: skip
NITR_NOTE = "evoci-scripted.txt"


def cli_script(cli: str, history: Path | None = None) -> Callable[[str, dict[str, Any]], Spec]:
    """The demo solver for ``cli`` (a preset name), for every wire protocol the server speaks."""
    states = _states(history or HISTORY_DIR)

    def script(protocol: str, request: dict[str, Any]) -> Spec:
        seen = _flat(request)
        tool = _shell_tool(request)
        if cli == "aider":
            return _aider(seen, states)
        if _asks_files(seen):  # read-only mode (NITR): the answer, whatever tools the CLI offers
            return text(_nitr_answer(seen))
        if tool is None and cli != "mini-swe-agent":
            return text("evoci demo")  # a side request (a title, a quota probe): no work in it
        command = _next_command(seen, states)
        if command is None:
            return _act(tool, f"echo {SUBMIT}") if cli == "mini-swe-agent" and "EVOCI-DONE" in seen else text("Done.")
        return _act(tool, command)

    return script


def _next_command(seen: str, states: list[dict[str, bytes]]) -> str | None:
    if "EVOCI-DONE" in seen:
        return None
    if "You are a senior software architect" in seen:
        return _write({REQUIREMENT_FILE: REQUIREMENT.encode()}, [])
    paths = sorted({p for s in states for p in s if not p.startswith("tests/")})
    if "EVOCI-SHA" not in seen:
        return "sha256sum " + " ".join(paths) + ' 2>/dev/null; echo EVOCI""-SHA'
    hashes = dict((p, h) for h, p in re.findall(r"\b([0-9a-f]{64})\s+\*?(\S+)", seen))
    current = max(range(len(states)), key=lambda k: (_matches(states[k], paths, hashes), k))
    target = min(current + _chunk(seen, states), len(states) - 1)
    wanted = states[target]
    writes = {p: wanted[p] for p in paths if p in wanted and hashes.get(p) != _sha(wanted[p])}
    gone = [p for p in paths if p not in wanted and p in hashes]
    return _write(writes, gone)


def _write(files: dict[str, bytes], gone: list[str]) -> str:
    parts = [f"rm -f {p}" for p in gone]
    for path, content in files.items():
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        parts.append(f"mkdir -p {folder} && echo {base64.b64encode(content).decode()} | base64 -d > {path}")
    return " && ".join([*parts, 'echo EVOCI""-DONE'])


def _act(tool: str | None, command: str) -> Spec:
    if tool is None:  # mini-swe-agent without tool calling: one fenced command in the text
        return text(f"THOUGHT: next step.\n\n```mswea_bash_command\n{command}\n```")
    if tool == "shell":
        return tool_call(tool, {"command": ["bash", "-lc", command]})
    if tool == "exec_command":
        return tool_call(tool, {"cmd": command})
    return tool_call(tool, {"command": command, "description": "evoci scripted step"})


def _aider(seen: str, states: list[dict[str, bytes]]) -> Spec:
    if "You are a senior software architect" in seen:
        return text(_whole({REQUIREMENT_FILE: REQUIREMENT}))
    if _asks_files(seen):
        return text(_nitr_answer(seen))
    paths = sorted({p for s in states for p in s if not p.startswith("tests/")})
    current = max(range(len(states)), key=lambda k: (sum(
        p in states[k] and bool(states[k][p].strip()) and states[k][p].decode().strip() in seen for p in paths), k))
    target = min(current + _chunk(seen, states), len(states) - 1)
    wanted = states[target]
    return text(_whole({p: wanted[p].decode() for p in paths if p in wanted and wanted[p] != states[current].get(p)}))


def _whole(files: dict[str, str]) -> str:
    blocks = [f"{path}\n````\n{content.rstrip()}\n````" for path, content in files.items()]  # aider's fence
    return "Here are the changes.\n\n" + "\n\n".join(blocks) + "\n"


def _asks_files(seen: str) -> bool:
    """The prompt asks for a ``{"files": ...}`` answer (OpenCode sends its prompt as a quoted string)."""
    return '{"files"' in seen or '{\\"files\\"' in seen


def _nitr_answer(seen: str) -> str:
    return json.dumps({"files": [{"filename": NITR_NOTE, "content": "written by the scripted model\n"}]})


def _states(history: Path) -> list[dict[str, bytes]]:
    states, tree = [], {}
    for step in load_history(history):
        tree = {p: c for p, c in {**tree, **step.files}.items() if p not in step.deletions}
        states.append(dict(tree))
    return states


def _chunk(seen: str, states: list[dict[str, bytes]]) -> int:
    match = re.search(r"of at most (\d+)", seen)
    return max(1, math.ceil((len(states) - 1) / int(match.group(1)))) if match else 1


def _matches(state: dict[str, bytes], paths: list[str], hashes: dict[str, str]) -> int:
    return sum((_sha(state[p]) if p in state else None) == hashes.get(p) for p in paths)


def _sha(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _shell_tool(request: dict[str, Any]) -> str | None:
    names = set()
    for tool in request.get("tools") or []:
        names.add(tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type"))
    return next((n for n in SHELL_TOOLS if n in names), None)


def _flat(request: dict[str, Any]) -> str:
    """Every string in the request, JSON-decoded (tool outputs nested as JSON text too)."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(value)
            if value[:1] in "[{":
                try:
                    walk(json.loads(value))
                except ValueError:
                    pass
        elif isinstance(value, dict):
            for key, item in value.items():
                if key != "tools":
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({k: v for k, v in request.items() if k != "tools"})
    return "\n".join(out)


__all__ = ["cli_script"]
