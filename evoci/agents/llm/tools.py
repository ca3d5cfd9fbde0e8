"""The tools an LLM agent may call. Every one reaches the workspace through ``ctx.sandbox``.

Both roles can browse: ``list_dir``, ``read_file`` (a window of numbered lines) and
``search_text`` (``grep`` run in the sandbox). The programmer also edits: ``write_file``
and ``replace_text`` (the old text must occur exactly once). The architect's
``write_file`` writes only ``.evoci/requirement.xml``. No tool runs tests or commands
of the model's choosing.

A tool that cannot do what was asked (bad JSON, unknown tool, missing file, ambiguous
replacement) answers with an error message the model reads; the loop goes on. So does any
argument no file system or program takes (a NUL, a name over 255 bytes, a folder where a file
is meant): those are checked before the tool acts, and the errors only the tree's shape can
cause (``_TREE_ERRNOS``) are told to the model too. A sandbox that fails (``SandboxError``) is an
infrastructure failure and propagates, as does any other ``OSError`` (a disk that failed).
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evoci import treefs
from evoci.agents.base import HARNESS_DIR, NON_PASSED_DIR, REQUIREMENT_FILE, Role
from evoci.sandbox.base import Sandbox, resolve_inside
from evoci.untrusted import json_loads, path_problem, storable

MAX_OUTPUT_CHARS = 40_000  # any tool result is cut to this size
READ_WINDOW_LINES = 400  # read_file returns at most this many lines per call
LIST_LIMIT = 500  # list_dir entries shown
SEARCH_LIMIT = 200  # search_text matches shown
SEARCH_TIMEOUT_S = 30.0
PATTERN_BYTES = 10_000  # longest search_text pattern: far below what one program argument may hold (128 KiB)
HIDDEN = {".git"}
# The only harness files a model may touch: its inputs and the architect's output.
_HARNESS_ALLOWED = (REQUIREMENT_FILE, NON_PASSED_DIR)
# What the tree's shape, not the host, makes a file operation fail with: a parent that is a file,
# a path longer than the system opens once joined to the workspace's, a link loop.
_TREE_ERRNOS = frozenset({errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EISDIR})


class ToolError(Exception):
    """The tool could not do what was asked; the message goes back to the model."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the model made it; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolResult:
    content: str
    is_error: bool = False


@dataclass(frozen=True)
class Tool:
    """A tool: its JSON-schema parameters and the function that runs it."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[["Workbench", dict[str, Any]], str]

    def openai_schema(self) -> dict[str, Any]:
        """The Chat Completions ``tools`` entry."""
        function = {"name": self.name, "description": self.description, "parameters": self.parameters}
        return {"type": "function", "function": function}

    def anthropic_schema(self) -> dict[str, Any]:
        """The Messages API ``tools`` entry."""
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}


@dataclass
class Workbench:
    """What tools act on: the sandbox, the role, and the files written so far."""

    sandbox: Sandbox
    role: Role
    written: set[str] = field(default_factory=set)

    def check_path(self, path: str) -> str:
        """``path`` normalized (``src/../a.py`` is ``a.py``) if a tool may use it: inside the workspace
        (symlinks resolved) without ``..`` left over, never git's folder, and of the harness's
        folder only the architect's inputs and requirement.xml."""
        problem = path_problem(path)
        if problem:
            raise ToolError(f"the path {_shown(path)} {problem}; no file can have it")
        try:
            resolve_inside(self.sandbox.workspace, path)
        except (ValueError, RuntimeError) as exc:  # RuntimeError: Path.resolve() meeting a link loop
            raise ToolError(str(exc)) from None
        normal = os.path.normpath(path)
        if normal == ".." or normal.startswith("../"):  # out and back in (../workspace/a.py): the sandbox refuses it
            raise ToolError(f"{path}: give the path from the workspace root, without '..'")
        parts = normal.split(os.sep)
        if any(part in HIDDEN for part in parts):
            raise ToolError(f"{path}: git's folder is not part of the workspace")
        if parts[0] == HARNESS_DIR and normal != HARNESS_DIR and not any(
            normal == allowed or normal.startswith(allowed + "/") for allowed in _HARNESS_ALLOWED
        ):
            raise ToolError(f"{path}: evoci's own files are off limits (only {', '.join(_HARNESS_ALLOWED)})")
        return normal

    def read_text(self, path: str) -> str:
        try:
            data = self.sandbox.read_file(self.check_path(path))
        except FileNotFoundError:
            raise ToolError(f"no such file: {path}") from None
        except IsADirectoryError:
            raise ToolError(f"{path} is a directory; use list_dir") from None
        except OSError as exc:
            if exc.errno not in _TREE_ERRNOS:
                raise
            raise ToolError(f"cannot read {_shown(path)}: {exc.strerror}") from None
        if b"\0" in data[:8192]:
            raise ToolError(f"{path} is a binary file ({len(data)} bytes)")
        return data.decode("utf-8", errors="replace")

    def write_text(self, path: str, content: str) -> None:
        normal = self.check_path(path)
        if normal == "." or path.endswith("/"):
            raise ToolError(f"{path!r} names a folder; give the path of a file")
        if treefs.kind(self.sandbox.workspace, normal) == "folder":  # writing would delete it
            raise ToolError(f"{path} is a directory; write a file inside it (list_dir shows what it holds)")
        try:
            self.sandbox.write_file(normal, content)
        except OSError as exc:
            if exc.errno not in _TREE_ERRNOS:
                raise
            raise ToolError(f"cannot write {_shown(path)}: {exc.strerror}") from None
        self.written.add(normal)


def _shown(path: str) -> str:
    return repr(path if len(path) <= 120 else path[:120] + "...")


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _list_dir(bench: Workbench, args: dict[str, Any]) -> str:
    path = bench.check_path(args.get("path") or ".")
    result = bench.sandbox.exec(["ls", "-1Ap", "--", path], timeout=SEARCH_TIMEOUT_S)
    if not result.ok:
        raise ToolError(result.stderr.strip() or f"cannot list {path}")
    entries = [e for e in result.stdout.splitlines() if e.rstrip("/") not in HIDDEN]
    shown = entries[:LIST_LIMIT]
    more = f"\n... and {len(entries) - LIST_LIMIT} more entries" if len(entries) > LIST_LIMIT else ""
    return ("\n".join(shown) or "(empty directory)") + more


def _read_file(bench: Workbench, args: dict[str, Any]) -> str:
    lines = bench.read_text(args["path"]).splitlines()
    start = max(int(args.get("start_line") or 1), 1)
    end = int(args.get("end_line") or start + READ_WINDOW_LINES - 1)
    end = min(end, len(lines), start + READ_WINDOW_LINES - 1)
    if not lines:
        return f"({args['path']} is empty)"
    if start > len(lines):
        raise ToolError(f"start_line {start} is past the end of {args['path']} ({len(lines)} lines)")
    body = "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(start, end + 1))
    footer = f"\n(lines {start}-{end} of {len(lines)}"
    footer += f"; call again with start_line={end + 1} for more)" if end < len(lines) else ")"
    return body + footer


def _search_text(bench: Workbench, args: dict[str, Any]) -> str:
    path = bench.check_path(args.get("path") or ".")
    mode = "-E" if args.get("regex") else "-F"
    if "\0" in args["pattern"]:  # no program argument can hold one
        raise ToolError("the pattern contains a NUL character; grep cannot search for it")
    if len(args["pattern"].encode()) > PATTERN_BYTES:  # the sandbox could not even start grep
        raise ToolError(f"the pattern is longer than {PATTERN_BYTES} bytes; search for a shorter part of it")
    cmd = ["grep", "-rnI", mode, "--exclude-dir=.git", "-e", args["pattern"], "--", path]
    result = bench.sandbox.exec(cmd, timeout=SEARCH_TIMEOUT_S)
    if result.timed_out:
        raise ToolError(f"search timed out after {SEARCH_TIMEOUT_S:.0f} s; search a narrower path")
    if result.exit_code == 1:
        return "no matches"
    if result.exit_code != 0:
        raise ToolError(result.stderr.strip() or "grep failed")
    matches = [line.removeprefix("./") for line in result.stdout.splitlines()]
    more = f"\n... and {len(matches) - SEARCH_LIMIT} more matches" if len(matches) > SEARCH_LIMIT else ""
    return "\n".join(matches[:SEARCH_LIMIT]) + more


def _write_file(bench: Workbench, args: dict[str, Any]) -> str:
    path, content = args["path"], args["content"]
    if bench.role is Role.ARCHITECT and os.path.normpath(path) != REQUIREMENT_FILE:
        raise ToolError(f"the architect may write only {REQUIREMENT_FILE}")
    bench.write_text(path, content)
    return f"wrote {path} ({len(content.splitlines())} lines)"


def _replace_text(bench: Workbench, args: dict[str, Any]) -> str:
    path, old, new = args["path"], args["old"], args["new"]
    if not old:
        raise ToolError("old must not be empty; use write_file to create a file")
    text = bench.read_text(path)
    count = text.count(old)
    if count != 1:
        where = "not found" if count == 0 else f"found {count} times; include more surrounding lines to make it unique"
        raise ToolError(f"old text {where} in {path}")
    bench.write_text(path, text.replace(old, new, 1))
    return f"replaced 1 occurrence in {path}"


LIST_DIR = Tool(
    "list_dir",
    "List the entries of a workspace folder (folders end with '/').",
    _schema([], path=_string("Folder relative to the workspace root; default '.'.")),
    _list_dir,
)
READ_FILE = Tool(
    "read_file",
    f"Read a text file with line numbers, at most {READ_WINDOW_LINES} lines per call.",
    _schema(
        ["path"],
        path=_string("File path relative to the workspace root."),
        start_line={"type": "integer", "description": "First line to show (1-based); default 1."},
        end_line={"type": "integer", "description": "Last line to show; default start_line + 399."},
    ),
    _read_file,
)
SEARCH_TEXT = Tool(
    "search_text",
    f"Search files for a text (or a regular expression); lists up to {SEARCH_LIMIT} matching lines as path:line:text.",
    _schema(
        ["pattern"],
        pattern=_string("The text to look for."),
        path=_string("File or folder to search, relative to the workspace root; default '.'."),
        regex={"type": "boolean", "description": "Treat pattern as an extended regular expression; default false."},
    ),
    _search_text,
)
WRITE_FILE = Tool(
    "write_file",
    "Create or replace a whole file.",
    _schema(
        ["path", "content"],
        path=_string("File path relative to the workspace root."),
        content=_string("The complete new content."),
    ),
    _write_file,
)
REPLACE_TEXT = Tool(
    "replace_text",
    "Replace one exact occurrence of old with new in a file; old must occur exactly once.",
    _schema(
        ["path", "old", "new"],
        path=_string("File path relative to the workspace root."),
        old=_string("The exact text to replace, with enough context to be unique."),
        new=_string("The replacement text."),
    ),
    _replace_text,
)


def tools_for(role: Role) -> list[Tool]:
    """The architect browses and writes requirement.xml; the programmer browses and edits."""
    if role is Role.ARCHITECT:
        return [LIST_DIR, READ_FILE, SEARCH_TEXT, WRITE_FILE]
    return [LIST_DIR, READ_FILE, SEARCH_TEXT, WRITE_FILE, REPLACE_TEXT]


def execute(tools: list[Tool], bench: Workbench, call: ToolCall) -> ToolResult:
    """Run one tool call; every mistake of the model becomes an error result."""
    by_name = {t.name: t for t in tools}
    tool = by_name.get(call.name)
    if tool is None:
        return ToolResult(f"unknown tool {call.name!r} — choose one of: {', '.join(by_name)}", True)
    try:
        args = json_loads(call.arguments or "{}")
    except json.JSONDecodeError as exc:
        return ToolResult(f"the arguments of {call.name} are not valid JSON ({exc}); send a JSON object", True)
    if not isinstance(args, dict):
        return ToolResult(f"the arguments of {call.name} must be a JSON object", True)
    problems = _check_args(tool, args)
    if problems:
        return ToolResult(f"bad arguments for {call.name}: {problems}", True)
    try:
        output = tool.run(bench, args)
    except ToolError as exc:
        return ToolResult(f"error: {exc}", True)
    if len(output) > MAX_OUTPUT_CHARS:
        output = output[:MAX_OUTPUT_CHARS] + f"\n... (output cut at {MAX_OUTPUT_CHARS} characters)"
    return ToolResult(output)


_TYPES = {"string": str, "integer": int, "boolean": bool}


def _check_args(tool: Tool, args: dict[str, Any]) -> str:
    props, required = tool.parameters["properties"], tool.parameters["required"]
    missing = [name for name in required if args.get(name) is None]  # null is no value: the tools need one
    unknown = [name for name in args if name not in props]
    wrong = [
        f"{name} must be of type {props[name]['type']}"
        for name, value in args.items()
        if name in props and value is not None and not _is(value, props[name]["type"])
    ]
    parts = [f"missing {', '.join(missing)}"] if missing else []
    parts += [f"unknown {', '.join(unknown)}"] if unknown else []
    return "; ".join(parts + wrong)


def _is(value: Any, type_name: str) -> bool:
    if type_name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if type_name == "string":  # text the workspace can hold: a lone surrogate cannot be written or searched for
        return isinstance(value, str) and storable(value)
    return isinstance(value, _TYPES[type_name])


__all__ = ["Tool", "ToolCall", "ToolError", "ToolResult", "Workbench", "execute", "tools_for"]
