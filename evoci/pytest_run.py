"""The test node's work: run a task's pytest suite in any sandbox and read what happened.

pytest starts through ``evoci.grading.launcher`` (``python -I``: the environment's pytest and
plugins are imported before any code of the tree can be; autoloading off; the report sent to
the harness in one frame by a process the tested code cannot reach, cross-checked with an
independent tally: ``evoci.grading.channel``). The configuration is the
reference's, passed explicitly: ``-c .evoci/pytest.ini --rootdir <tree> --confcutdir <tree>``,
so neither a configuration file the agent wrote nor one above the tree is read.

Who is to blame when the run goes wrong decides whether the iteration is scored or retried
(evoci's metric definitions, "SWE-CI protocol"). Infrastructure is only what the harness can
prove; everything else the code under test could have caused is the agent's outcome:

==============================================  =========================================
the run ended with                              result
==============================================  =========================================
the test timeout (the harness's own kill)       ``TIMEOUT``, no outcomes
a void channel (two frames, text around the     ``AGENT_ERROR``, no outcomes, flagged
frame, a launcher killed after it was written)
a report, exit 0 or 1                           ``OK`` (report and tally disagree: the
                                                lower is graded, flagged)
a report, any other exit (collection errors,    ``AGENT_ERROR``, scored from the report
internal error, usage error, no tests)
no report (a crash, a signal, ``os._exit``,     the **canary** decides
a conftest that cannot import, exit 4 …)
a sandbox that lost the exit status             raise ``HarnessTimeout``
==============================================  =========================================

**The canary rule.** A run can end without a report because the harness is broken (pytest or
the plugin missing from the environment, the sandbox unable to start) or because the code under
test stopped it. The canary runs ``python -I -c "import pytest, pytest_jsonreport"`` in the same
sandbox: it fails → the environment or the sandbox is broken → raise ``SandboxError`` (Prefect
retries the node). It passes → the same harness could have produced a report and the code under
test prevented it → ``AGENT_ERROR`` with no outcomes (every target scores ``missing``). A pytest
usage error (exit 4) is the agent's too: the configuration is the reference's and was proven on
the reference's own run; on that run itself, ``evoci.sandbox.repair`` reads the error (a
``--cov`` with no ``pytest-cov``) before the task is judged.
"""

from __future__ import annotations

import logging
import posixpath
import secrets
import signal
from pathlib import PurePosixPath
from typing import Any

from evoci.domain import OUTCOMES, TaskSpec, TestReport, TestStatus
from evoci.errors import HarnessTimeout, SandboxError, TaskSpecError
from evoci.grading.channel import Frame, cross_check, read_frame
from evoci.grading.launcher import LAUNCHER
from evoci.sandbox.base import ExecResult, Sandbox

log = logging.getLogger(__name__)

CONFIG_FILE = ".evoci/pytest.ini"  # the reference's runner configuration, in the graded tree
DETAIL_LIMIT = 8 * 1024  # characters of failure text kept per test
TAIL_LINES = 60
# The report travels on the launcher's standard output: room for tens of thousands of tests.
REPORT_LIMIT = 64 * 1024 * 1024
# Report fields evoci never reads. Streams matter most: a test printing 100 MB would
# otherwise put 100 MB into the report.
OMIT = ("streams", "log", "keywords", "warnings", "traceback")
_HOUSEKEEPING_TIMEOUT_S = 120.0
_CANARY = "import pytest, pytest_jsonreport"


def pytest_args(task: TaskSpec, root: str, report_path: str) -> list[str]:
    """pytest's arguments: the task's own (after ``python -m pytest`` or ``pytest``), evoci's around them."""
    args = _task_args(task)
    return [
        "-c", f"{root}/{CONFIG_FILE}", f"--rootdir={root}", f"--confcutdir={root}",
        "--json-report", f"--json-report-file={report_path}", "--json-report-omit", *OMIT,
        "-p", "no:cacheprovider", "-q", *args,
    ]  # fmt: skip


def run_pytest(sandbox: Sandbox, task: TaskSpec, *, timeout: float, output_limit: int,
               runner_config: str = "[pytest]\n") -> TestReport:
    """Run ``task``'s tests in ``sandbox`` under ``runner_config``; raise only for infrastructure (module docstring)."""
    sandbox.write_file(CONFIG_FILE, runner_config)
    root = sandbox.visible_root
    report_path = f"{sandbox.report_dir}/evoci-report-{secrets.token_hex(8)}.json"
    paths = [posixpath.normpath(posixpath.join(root, p)) for p in task.pythonpath]
    cmd = launch_command(_python(task), root, report_path, paths, pytest_args(task, root, report_path))
    # Child processes of the tests import the tree as `python -m pytest` with PYTHONPATH would.
    env = {"PYTHONPATH": ":".join(paths)}
    result = sandbox.exec(cmd, env=env, timeout=timeout, output_limit=max(output_limit, REPORT_LIMIT))
    return _classify(sandbox, task, result)


def launch_command(python: str, root: str, report_path: str, paths: list[str], args: list[str]) -> list[str]:
    """The command that runs pytest with ``args`` through ``evoci.grading.launcher`` (every grader's way in)."""
    # -B: -I ignores PYTHONDONTWRITEBYTECODE, and a grading run must leave no bytecode in a mounted tree.
    return [python, "-I", "-B", "-c", LAUNCHER, root, report_path, str(len(paths)), *paths, *args]


def graded_outcomes(frame: Frame) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """A frame's report as outcomes and failure texts, cross-checked with its tally, and the flags of both checks."""
    reported, details = _outcomes(frame.report or {})
    outcomes, disagreements = cross_check(reported, frame)
    replaced = [f"the test run replaced {name} (in-process sabotage)" for name in frame.runtime_changes]
    return outcomes, details, [*replaced, *disagreements]


def _task_args(task: TaskSpec) -> list[str]:
    cmd = list(task.test_command)
    if len(cmd) >= 3 and PurePosixPath(cmd[0]).name.startswith("python") and cmd[1:3] == ["-m", "pytest"]:
        return cmd[3:]
    if cmd and PurePosixPath(cmd[0]).name in ("pytest", "py.test"):
        return cmd[1:]
    raise TaskSpecError(
        f"test_command {cmd} does not run pytest: write it as ['python', '-m', 'pytest', <args>…] "
        "or ['pytest', <args>…] (evoci adds its own options)"
    )


def _python(task: TaskSpec) -> str:
    first = task.test_command[0] if task.test_command else "python"
    return first if PurePosixPath(first).name.startswith("python") else "python"


def _classify(sandbox: Sandbox, task: TaskSpec, result: ExecResult) -> TestReport:
    tail = _tail(result)
    common = {"exit_code": result.exit_code, "duration_s": result.duration_s, "output_tail": tail}
    if result.timed_out:
        return TestReport(status=TestStatus.TIMEOUT, **common)
    if result.exit_code is None:
        raise HarnessTimeout(f"the sandbox lost the test process's exit status; output ends:\n{tail}")
    frame = read_frame(result)
    if frame.void:
        note = f"[evoci: the report is void: {frame.void}]"
        return TestReport(status=TestStatus.AGENT_ERROR, integrity_flags=[f"the report is void: {frame.void}"],
                          **{**common, "output_tail": f"{tail}\n{note}".strip()})
    if frame.report is None:
        _require_canary(sandbox, task, tail)
        ended = ending(frame.exit_code if frame.exit_code is not None else result.exit_code)
        note = f"[evoci: the test run ended {ended} without a report{': ' + frame.problem if frame.problem else ''}]"
        return TestReport(status=TestStatus.AGENT_ERROR, **{**common, "output_tail": f"{tail}\n{note}".strip()})
    outcomes, details, flags = graded_outcomes(frame)
    status = TestStatus.OK if frame.exit_code in (0, 1) else TestStatus.AGENT_ERROR
    return TestReport(
        status=status, outcomes=outcomes, details=details, collection_errors=_collection_errors(frame.report),
        integrity_flags=flags, **common,
    )


def _require_canary(sandbox: Sandbox, task: TaskSpec, tail: str) -> None:
    """Raise SandboxError unless the sandbox can start the environment's pytest and its report plugin."""
    canary = sandbox.exec([_python(task), "-I", "-B", "-c", _CANARY], timeout=_HOUSEKEEPING_TIMEOUT_S)
    if not canary.ok:
        raise SandboxError(
            "pytest wrote no report and the sandbox cannot start pytest-json-report "
            f"(canary: {_tail(canary, 10)}); rebuild the environment or check the sandbox. "
            f"pytest's output ends:\n{tail}"
        )


def ending(code: int) -> str:
    if code < 0:
        return f"by {_signal_name(-code)}"
    if code > 128 and code - 128 in signal.valid_signals():
        return f"with exit {code} ({_signal_name(code - 128)}?)"
    return f"with exit {code}"


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
            details[test["nodeid"]] = _cap(text or outcome, DETAIL_LIMIT)
    return outcomes, details


def _collection_errors(report: dict[str, Any]) -> dict[str, str]:
    return {
        c["nodeid"]: _cap(c.get("longrepr") or "collection failed", DETAIL_LIMIT)
        for c in report.get("collectors") or []
        if c.get("outcome") == "failed"
    }


def _cap(text: str, limit: int) -> str:
    """At most ``limit`` characters: a quarter from the start, the rest from the end (where the error is)."""
    if len(text) <= limit:
        return text
    head = limit // 4
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit} characters dropped …]\n{text[-tail:]}"


def _tail(result: ExecResult, lines: int = TAIL_LINES) -> str:
    text = "\n".join(part for part in (result.stdout.rstrip(), result.stderr.rstrip()) if part)
    return "\n".join(text.splitlines()[-lines:])


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
