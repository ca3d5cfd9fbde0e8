"""The tools: windowed reading, grep in the sandbox, exact-one replacement, errors as results."""

from __future__ import annotations

import json

from evoci.agents.base import REQUIREMENT_FILE, Role
from evoci.agents.llm.tools import READ_WINDOW_LINES, ToolCall, Workbench, execute, tools_for
from evoci.sandbox.local import LocalSandbox


def call(sandbox: LocalSandbox, name: str, role: Role = Role.PROGRAMMER, raw: str | None = None, **args) -> tuple[str, bool]:
    result = execute(tools_for(role), Workbench(sandbox, role), ToolCall("id", name, raw if raw is not None else json.dumps(args)))
    return result.content, result.is_error


def test_read_file_numbers_lines_in_a_window(sandbox: LocalSandbox) -> None:
    sandbox.write_file("big.py", "".join(f"line {n}\n" for n in range(1, 1001)))
    content, error = call(sandbox, "read_file", path="big.py")
    assert not error and content.splitlines()[0] == "     1\tline 1"
    assert f"(lines 1-{READ_WINDOW_LINES} of 1000; call again with start_line={READ_WINDOW_LINES + 1} for more)" in content
    content, _ = call(sandbox, "read_file", path="big.py", start_line=999, end_line=5000)
    assert content.splitlines()[:2] == ["   999\tline 999", "  1000\tline 1000"]
    assert call(sandbox, "read_file", path="nope.py") == ("error: no such file: nope.py", True)


def test_list_dir_and_search_text_run_in_the_sandbox(sandbox: LocalSandbox) -> None:
    assert call(sandbox, "list_dir")[0].splitlines() == [".evoci/", "src/", "tests/"]
    assert call(sandbox, "list_dir", path="src")[0] == "calc.py"
    assert call(sandbox, "search_text", pattern="a - b") == ("src/calc.py:2:    return a - b", False)
    assert call(sandbox, "search_text", pattern="def (add|sub)", regex=True, path="src")[0] == "src/calc.py:1:def add(a, b):"
    assert call(sandbox, "search_text", pattern="nothing like this") == ("no matches", False)


def test_replace_text_needs_exactly_one_match(sandbox: LocalSandbox) -> None:
    sandbox.write_file("m.py", "x = 1\nx = 1\ny = 2\n")
    content, error = call(sandbox, "replace_text", path="m.py", old="x = 1", new="x = 3")
    assert error and "found 2 times" in content
    assert call(sandbox, "replace_text", path="m.py", old="z", new="q")[0] == "error: old text not found in m.py"
    assert call(sandbox, "replace_text", path="m.py", old="y = 2", new="y = 5") == ("replaced 1 occurrence in m.py", False)
    assert sandbox.read_file("m.py") == b"x = 1\nx = 1\ny = 5\n"


def test_writes_stay_inside_the_workspace_and_the_architect_writes_only_the_requirement(sandbox: LocalSandbox) -> None:
    assert call(sandbox, "write_file", path="../escape.py", content="x")[1]
    assert call(sandbox, "write_file", path="/tmp/abs.py", content="x")[1]
    assert not (sandbox.workspace.parent / "escape.py").exists()
    assert call(sandbox, "write_file", Role.ARCHITECT, path="src/calc.py", content="x") == (
        f"error: the architect may write only {REQUIREMENT_FILE}", True)  # fmt: skip
    assert not call(sandbox, "write_file", Role.ARCHITECT, path=f"./{REQUIREMENT_FILE}", content="<r/>")[1]
    assert "replace_text" not in {t.name for t in tools_for(Role.ARCHITECT)}


def test_model_mistakes_become_error_results(sandbox: LocalSandbox) -> None:
    content, error = call(sandbox, "read_file", raw='{"path": "src/calc.py"')
    assert error and "not valid JSON" in content
    assert call(sandbox, "read_file", raw='["src/calc.py"]')[0] == "the arguments of read_file must be a JSON object"
    assert call(sandbox, "run_tests")[0].startswith("unknown tool 'run_tests' — choose one of: list_dir, read_file")
    content, error = call(sandbox, "read_file", file="x", start_line="3")
    assert error and "missing path" in content and "unknown file" in content
    assert call(sandbox, "read_file", path="src/calc.py", start_line="3")[0].endswith("start_line must be of type integer")
    # Once raised past the tool loop, failing the node as the harness's fault: null where text is
    # required, and text with a lone surrogate (no file can hold it).
    assert "missing path" in call(sandbox, "read_file", path=None)[0]
    assert "missing content" in call(sandbox, "write_file", path="src/new.py", content=None)[0]
    assert "missing pattern" in call(sandbox, "search_text", pattern=None)[0]
    content, error = call(sandbox, "write_file", path="src/new.py", content="x = '\ud800'\n")
    assert error and "content must be of type string" in content and not (sandbox.workspace / "src/new.py").exists()


def test_tool_schemas_in_both_formats() -> None:
    tool = tools_for(Role.PROGRAMMER)[-1]
    assert tool.openai_schema()["function"]["parameters"]["required"] == ["path", "old", "new"]
    assert tool.anthropic_schema()["input_schema"] == tool.parameters


def test_tools_refuse_git_evoci_internals_and_links_out_of_the_workspace(sandbox: LocalSandbox, tmp_path) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("do not read")
    (sandbox.workspace / "leak.txt").symlink_to(outside)
    (sandbox.workspace / ".git").mkdir(exist_ok=True)
    (sandbox.workspace / ".evoci").mkdir(exist_ok=True)
    (sandbox.workspace / ".evoci" / "prompt.md").write_text("harness")
    for name, args in [("read_file", {"path": "leak.txt"}), ("read_file", {"path": ".git/config"}),
                       ("write_file", {"path": ".git/hooks/post-commit", "content": "#!/bin/sh\n"}),
                       ("write_file", {"path": "src/../.git/config", "content": "[core]\n"}),
                       ("read_file", {"path": ".evoci/prompt.md"}), ("list_dir", {"path": ".git"})]:
        text, is_error = call(sandbox, name, **args)
        assert is_error, f"{name} {args} was allowed: {text}"
        assert "do not read" not in text
    assert not (sandbox.workspace / ".git" / "hooks").exists()
    # The architect's inputs and output stay reachable.
    text, is_error = call(sandbox, "write_file", Role.ARCHITECT, path=REQUIREMENT_FILE, content="<requirements/>")
    assert not is_error, text


def test_arguments_no_file_system_or_program_takes_are_error_results(sandbox: LocalSandbox) -> None:
    # Each once raised out of the agent loop (OSError, ValueError), failing the node as the harness's
    # fault: a name over 255 bytes, the workspace root or a folder as the file to write, a NUL, a
    # pattern too long to pass to grep, a path through a file.
    long_name = "a" * 300
    for name, args in [("read_file", {"path": long_name}), ("write_file", {"path": long_name, "content": "x"}),
                       ("replace_text", {"path": f"src/{long_name}", "old": "a", "new": "b"})]:
        content, error = call(sandbox, name, **args)
        assert error and "has a name longer than 255 bytes" in content, (name, content)
    deep = "/".join(["b" * 200] * 30)  # every name fits, the whole is past what the system opens
    assert "is longer than 4095 bytes" in call(sandbox, "read_file", path=deep)[0]
    for path in (".", "", "./", "src/"):
        content, error = call(sandbox, "write_file", path=path, content="x")
        assert error and "names a folder; give the path of a file" in content, (path, content)
    content, error = call(sandbox, "write_file", path="src", content="x")
    assert error and "src is a directory" in content and (sandbox.workspace / "src" / "calc.py").is_file()
    assert call(sandbox, "read_file", path="src") == ("error: src is a directory; use list_dir", True)
    for name, args in [("search_text", {"pattern": "a\0b"}), ("search_text", {"pattern": "a\0b", "regex": True}),
                       ("read_file", {"path": "src/calc\0.py"}), ("list_dir", {"path": "src\0"}),
                       ("write_file", {"path": "x\0.py", "content": "x"}), ("search_text", {"pattern": "a", "path": "\0"})]:
        content, error = call(sandbox, name, **args)
        assert error and "NUL character" in content, (name, content)
    content, error = call(sandbox, "search_text", pattern="x" * 200_000)
    assert error and "longer than 10000 bytes" in content
    content, error = call(sandbox, "read_file", path="src/calc.py/inner.py")
    assert error and "Not a directory" in content
    for name, args in [("read_file", {"path": "../workspace/src/calc.py"}), ("list_dir", {"path": "../workspace"}),
                       ("write_file", {"path": "../workspace/src/new.py", "content": "x"})]:  # out and back in
        content, error = call(sandbox, name, **args)
        assert error and "without '..'" in content, (name, content)
    assert call(sandbox, "read_file", path="tests/../src/calc.py")[0].startswith("     1\tdef add")
    assert sorted(p.name for p in sandbox.workspace.iterdir()) == [".evoci", "src", "tests"]
