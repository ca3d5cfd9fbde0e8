"""Step 2 and 3 of the one grading path: run a grading command in a sandbox over the tree the harness
built, and read only what the harness can trust of how it ended.

Every protocol's grader calls these (``evoci.grading`` lists the four steps). Three ways to run:

``run_launched``  pytest through ``evoci.grading.launcher`` (SWE-CI's test node, and SWE-EVO's and
                  SWE-Bench-CL's records whose command is one plain pytest command): the report
                  arrives on a private channel, cross-checked with an independent tally; nothing
                  the tests print is read.
``run_logged``    any other runner (a record's script: django's, sympy's), read by a log parser
                  the protocol plugs in; what a killed command printed is never read.
``run_proven``    a command judged by its exit status (NITR's modules); "the tool is missing" is
                  believed only when the harness's own lookup confirms it.

The rules they share (evoci's grading integrity, "Infrastructure is what the harness proves"):

===================================================  =========================================
the command ended with                               result
===================================================  =========================================
the harness's own timeout                            ``timeout``, nothing read
a lost exit status (the sandbox failed)              raise ``HarnessTimeout`` (retried)
a void channel (two frames, text around the frame,   ``agent_error``, nothing read, flagged
a launcher killed after it was written)
no report / no result at all                         the **canary** decides: it fails → raise
                                                     ``SandboxError`` (retried); it passes →
                                                     ``agent_error``, nothing read
a signal, or an exit no runner ends with by itself   ``agent_error``, nothing read, flagged
(log-parsed commands)
a report (or parsed outcomes)                        ``ok`` when the exit is one the protocol
                                                     grades, else ``agent_error`` (still read)
===================================================  =========================================

The canary runs ``python -I -B -c "import …"`` (the runner and its report plugin) in the same
sandbox: when it fails the environment or the sandbox is broken; when it passes the same harness
could have produced a result and the code under test prevented it, which is the agent's outcome
(code that kills its own test run cannot turn its grade into a retry).
"""

from __future__ import annotations

import posixpath
import secrets
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from evoci import treefs
from evoci.domain import OUTCOMES
from evoci.errors import HarnessTimeout, InfrastructureError, SandboxError
from evoci.grading.bytecode import LIST_FILE, BytecodeStore, Listed
from evoci.grading.channel import Frame, cross_check, read_frame
from evoci.grading.launcher import BYTECODE_LIMIT, LAUNCHER
from evoci.sandbox.base import ExecResult, Sandbox

DETAIL_LIMIT = 8 * 1024  # characters of failure text kept per test
TAIL_LINES = 60
# The report travels on the launcher's standard output: room for tens of thousands of tests.
REPORT_LIMIT = 64 * 1024 * 1024
# Report fields evoci never reads. Streams matter most: a test printing 100 MB would
# otherwise put 100 MB into the report.
OMIT = ("streams", "log", "keywords", "warnings", "traceback")
# What a launched run needs from the environment, and what a log-parsed pytest script needs.
LAUNCHED_CANARY = ("pytest", "pytest_jsonreport")
PYTEST_CANARY = ("pytest",)
# How a test runner ends by itself (pytest uses 0–5; django's and sympy's runners 0 and 1).
NORMAL_EXITS = frozenset(range(6))
_NOT_STARTED = (126, 127)  # shells' "cannot execute" / "not found"
_HOUSEKEEPING_TIMEOUT_S = 120.0

Parse = Callable[[str], dict[str, str]]


class Ran(BaseModel):
    """What the harness read of one grading command: outcomes in the runner's own ids."""

    status: Literal["ok", "timeout", "agent_error"]
    outcomes: dict[str, str] = Field(default_factory=dict)
    details: dict[str, str] = Field(default_factory=dict, description="Failure text per test not passed.")
    collection_errors: dict[str, str] = Field(default_factory=dict)
    flags: list[str] = Field(default_factory=list, description="Integrity flags the run raised.")
    unread: str | None = Field(None, description="Why nothing was read, in words (no report, a void channel).")
    exit_code: int | None = None
    duration_s: float = 0.0
    output_tail: str = ""


@contextmanager
def in_sandbox(root: Path, open_tree: Callable[[Path], Sandbox], *, clear: bool = True) -> Iterator[Sandbox]:
    """A sandbox over the grading tree at ``root``; closed after, and the tree removed unless ``clear`` is off.

    ``treefs.clear``: the agent's folders may be nested deeper than ``shutil.rmtree`` recurses,
    and a link in the tree is removed, never followed.
    """
    sandbox = open_tree(root)
    try:
        yield sandbox
    finally:
        sandbox.cleanup()
        if clear:
            treefs.clear(root)


def launch_command(python: str, root: str, report_path: str, paths: list[str], args: list[str],
                   listed: str = "-") -> list[str]:
    """The command that runs pytest with ``args`` through ``evoci.grading.launcher`` (every launched run's way in).

    ``listed``: the file naming the test modules to rewrite ahead (``evoci.grading.bytecode``), or ``-``.
    """
    # -B: -I ignores PYTHONDONTWRITEBYTECODE, and a grading run must leave no bytecode in a mounted tree.
    return [python, "-I", "-B", "-c", LAUNCHER, root, report_path, listed, str(len(paths)), *paths, *args]


def run_launched(sandbox: Sandbox, *, options: Sequence[str], args: Sequence[str], pythonpath: Sequence[str],
                 timeout: float, output_limit: int, graded_exits: frozenset[int], python: str = "python",
                 bytecode: BytecodeStore | None = None, runner_config: str = "",
                 test_folders: tuple[str, ...] = ()) -> Ran:
    """Run pytest with the harness's ``options`` (its configuration) and the command's ``args`` through the launcher.

    ``graded_exits``: pytest's exit codes after which the run is ``ok`` (any other with a report is
    ``agent_error``, its outcomes still read). Raises only for infrastructure (module docstring).
    ``bytecode``: where rewritten test modules are kept between runs (``evoci.grading.bytecode``),
    under ``runner_config``, the configuration ``options`` pass, for the test modules under
    ``test_folders`` (the reference's) and every conftest.
    """
    root = sandbox.visible_root
    report_path = f"{sandbox.report_dir}/evoci-report-{secrets.token_hex(8)}.json"
    paths = [posixpath.normpath(posixpath.join(root, p)) for p in pythonpath]
    report = ["--json-report", f"--json-report-file={report_path}", "--json-report-omit", *OMIT]
    listed, ahead = _rewrite_ahead(sandbox, bytecode, runner_config, test_folders, (*options, *args))
    # Child processes of the tests import the tree as `python -m pytest` with PYTHONPATH would.
    result = sandbox.exec(launch_command(python, root, report_path, paths, [*options, *report, *args], ahead),
                          env={"PYTHONPATH": ":".join(paths)}, timeout=timeout,
                          output_limit=max(output_limit, REPORT_LIMIT + BYTECODE_LIMIT + (1 << 20)))
    common = _common(result)
    if result.timed_out:
        return Ran(status="timeout", **common)
    if result.exit_code is None:
        raise HarnessTimeout(f"the sandbox lost the test process's exit status; output ends:\n{common['output_tail']}")
    frame = read_frame(result)
    if frame.exit_code is not None:  # the launcher itself ends 0 after its frame: the test process's exit
        common["exit_code"] = frame.exit_code if frame.exit_code >= 0 else 128 - frame.exit_code
    if bytecode is not None and listed is not None and frame.void is None and frame.bytecode:
        bytecode.keep(listed, frame.bytecode)
    if frame.void:
        return Ran(status="agent_error", flags=[f"the report is void: {frame.void}"],
                   unread=f"the report is void: {frame.void}", **common)
    if frame.report is None:
        require_canary(sandbox, python, LAUNCHED_CANARY, common["output_tail"])
        ended = ending(frame.exit_code if frame.exit_code is not None else result.exit_code)
        return Ran(status="agent_error", unread=f"the test run ended {ended} without a report"
                   f"{': ' + frame.problem if frame.problem else ''}", **common)
    outcomes, details, flags = graded_outcomes(frame)
    return Ran(status="ok" if frame.exit_code in graded_exits else "agent_error", outcomes=outcomes,
               details=details, collection_errors=_collection_errors(frame.report), flags=flags, **common)


def _rewrite_ahead(sandbox: Sandbox, bytecode: BytecodeStore | None, runner_config: str,
                   test_folders: tuple[str, ...], arguments: tuple[str, ...]) -> tuple[Listed | None, str]:
    """Kept bytecode put in place, and the launcher's list of test modules to rewrite ahead (or ``-``).

    Only time is at stake: whatever goes wrong here, the run goes on as without a store.
    """
    if bytecode is None:
        return None, "-"
    environment = getattr(sandbox, "environment", None)
    where = (f"{type(sandbox).__name__}:{getattr(environment, 'spec_hash', None) or getattr(sandbox, 'image', '')}:"
             f"{sandbox.visible_root}")
    try:
        listed = bytecode.prepare(sandbox.workspace, where, runner_config, test_folders, arguments)
        if listed is None or not listed.missing:
            return listed, "-"
        sandbox.write_file(LIST_FILE, "\n".join(listed.missing).encode("utf-8", "surrogateescape"))
    except (OSError, UnicodeError, ValueError):
        return None, "-"
    return listed, f"{sandbox.visible_root}/{LIST_FILE}"


def run_logged(sandbox: Sandbox, argv: list[str], *, env: dict[str, str], timeout: float, output_limit: int,
               parse: Parse, graded_exits: frozenset[int], canary: Sequence[str] = PYTEST_CANARY) -> Ran:
    """Run a script whose outcomes only its output says, read by the protocol's ``parse`` (output → outcomes).

    A command that ends by a signal or with an exit no runner ends with by itself is not read:
    its code could have printed anything before it killed itself. A run with nothing parsed is
    the agent's only when the canary passes. ``ok`` when something was parsed or the exit is one
    of ``graded_exits``.
    """
    result = sandbox.exec(argv, env=env, timeout=timeout, output_limit=output_limit)
    common = _common(result)
    if result.timed_out:
        return Ran(status="timeout", **common)
    if result.exit_code is None:
        raise HarnessTimeout(f"the sandbox lost the test command's exit status; output ends:\n{common['output_tail']}")
    if result.exit_code not in NORMAL_EXITS:
        # What a killed run printed is whatever its code chose to print: it is never graded.
        unread = f"the test command ended {ending(result.exit_code)}"
        return Ran(status="agent_error", unread=unread, flags=[
            f"{unread}: what it printed is not graded (scored as nothing passing)"], **common)
    outcomes = parse(f"{result.stdout}\n{result.stderr}")
    if not outcomes:
        require_canary(sandbox, "python", canary, common["output_tail"])
    return Ran(status="ok" if outcomes or result.exit_code in graded_exits else "agent_error", outcomes=outcomes,
               **common)


def run_proven(sandbox: Sandbox, argv: list[str], *, env: dict[str, str], cwd: str, timeout: float,
               output_limit: int, missing: Callable[[str], InfrastructureError],
               reclaim: Callable[[], None] = lambda: None) -> ExecResult:
    """Run a command judged by its exit status; raise ``missing(text)`` only when the harness proves the tool absent.

    The tested code can exit 126 or 127 too: only a lookup the harness runs says the program is
    missing, and only for a program found on the sandbox's PATH (a bare name). A program named by a
    path (``./build/tests``, ``build/run``) is in the tree or its build, which the code under test
    makes: its absence is the code's outcome. The lookup runs at the tree's root after ``reclaim``
    (which gives the harness its folders back: the tested code may have locked the tree's root,
    and a lookup that cannot enter it would prove nothing).
    """
    result = sandbox.exec(argv, env=env, cwd=cwd, timeout=timeout, output_limit=output_limit)
    if result.exit_code in _NOT_STARTED and argv and "/" not in argv[0]:
        reclaim()
        found = sandbox.exec(["sh", "-c", 'command -v "$0"', argv[0]], cwd=".", timeout=30)
        if not found.ok:
            raise missing(f"the sandbox has no {argv[0]!r} (exit {result.exit_code}) — install the tool in the "
                          "sandbox's environment or image")
    return result


def require_canary(sandbox: Sandbox, python: str, imports: Sequence[str], tail: str) -> None:
    """Raise SandboxError unless ``python -I`` in ``sandbox`` imports ``imports`` (the tree is ignored)."""
    canary = sandbox.exec([python, "-I", "-B", "-c", f"import {', '.join(imports)}"], timeout=_HOUSEKEEPING_TIMEOUT_S)
    if not canary.ok:
        raise SandboxError(
            f"the test run gave no result and the test environment cannot import {', '.join(imports)} "
            f"(canary: {tail_of(canary, 10)}); rebuild the environment or check the sandbox. "
            f"The test command's output ends:\n{tail}"
        )


def graded_outcomes(frame: Frame) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """A frame's report as outcomes and failure texts, cross-checked with its tally, and the flags of both checks."""
    reported, details = _outcomes(frame.report or {})
    outcomes, disagreements = cross_check(reported, frame)
    replaced = [f"the tested code registered a pytest {name} (in-process sabotage)" if name.startswith("hook ")
                else f"the test run replaced {name} (in-process sabotage)" for name in frame.runtime_changes]
    return outcomes, details, [*replaced, *disagreements]


def ending(code: int) -> str:
    """How a process ended, in words: ``by SIGKILL``, ``with exit 137 (SIGKILL?)``, ``with exit 3``."""
    if code < 0:
        return f"by {_signal_name(-code)}"
    if code > 128 and code - 128 in signal.valid_signals():
        return f"with exit {code} ({_signal_name(code - 128)}?)"
    return f"with exit {code}"


def tail_of(result: ExecResult, lines: int = TAIL_LINES) -> str:
    text = "\n".join(part for part in (result.stdout.rstrip(), result.stderr.rstrip()) if part)
    return "\n".join(text.splitlines()[-lines:])


def cap(text: str, limit: int) -> str:
    """At most ``limit`` characters: a quarter from the start, the rest from the end (where the error is)."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit} characters dropped …]\n{text[-tail:]}"


def _common(result: ExecResult) -> dict[str, Any]:
    return {"exit_code": result.exit_code, "duration_s": result.duration_s, "output_tail": tail_of(result)}


def _outcomes(report: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    outcomes: dict[str, str] = {}
    details: dict[str, str] = {}
    for test in report.get("tests") or []:
        stages = {when: test.get(when) or {} for when in ("setup", "call", "teardown")}
        outcome = test.get("outcome")
        if outcome not in OUTCOMES:  # a plugin's own status word, e.g. "rerun"
            outcome = stages["call"].get("outcome") if stages["call"].get("outcome") in OUTCOMES else "error"
        if any(stages[when].get("outcome") == "failed" for when in ("setup", "teardown")):
            outcome = "error"
        outcomes[test["nodeid"]] = outcome
        if outcome != "passed":
            text = "\n".join(s["longrepr"] for s in stages.values() if s.get("longrepr"))
            details[test["nodeid"]] = cap(text or outcome, DETAIL_LIMIT)
    return outcomes, details


def _collection_errors(report: dict[str, Any]) -> dict[str, str]:
    return {
        c["nodeid"]: cap(c.get("longrepr") or "collection failed", DETAIL_LIMIT)
        for c in report.get("collectors") or []
        if c.get("outcome") == "failed"
    }


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
