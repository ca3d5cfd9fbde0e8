"""The test node's work: run a task's pytest suite in any sandbox and read what happened.

pytest runs with pytest-json-report writing to ``.evoci/report-<random>.json`` inside the
workspace; the report is read back through the sandbox and removed.

Who is to blame when the run goes wrong decides whether the iteration is scored or
retried (evoci's metric definitions, "SWE-CI protocol"), so every ending is classified:

==============================================  =========================================
pytest ended with                               result
==============================================  =========================================
the test timeout                                ``TIMEOUT``, no outcomes
exit 0 or 1, report written                     ``OK``
exit 2, 3, 5 (collection errors, internal       ``AGENT_ERROR``, scored from the report's
error from a conftest hook, no tests) or any    tests (usually none pass)
other code a conftest chose, report written
exit 4 "ImportError while loading conftest"     see "no report" below (the codebase's
                                                conftest, usually importing broken code)
exit 4 otherwise (usage error)                  raise ``SandboxError``: the test command,
                                                or an ``addopts`` plugin missing from the
                                                environment, is wrong — not the agent
killed by SIGKILL, SIGTERM, SIGINT, … that      raise ``SandboxError`` (out of memory, the
evoci did not send                              host or an operator killed it)
killed by a crash signal (SIGSEGV, SIGABRT,     see "no report" below
SIGBUS, SIGFPE, SIGILL, …)
no report (any other case)                      the **canary** decides
an unreadable report                            raise ``SandboxError``
==============================================  =========================================

**The canary rule.** A suite can end without a report for two kinds of reasons: the
harness is broken (pytest or the plugin missing from the environment, ``.evoci/`` not
writable, disk full — the plugin only *prints* "could not save report"), or the code under
test killed pytest (``os._exit`` in an import, a segfault in an extension, a conftest that
cannot be imported). To tell them apart, evoci runs a canary in the same sandbox:
``python -I -c "import pytest, pytest_jsonreport"`` that also writes a file next to where
the report should be. ``-I`` keeps the workspace off ``sys.path``, so the codebase cannot
break the canary (a stray ``pytest.py`` or ``json.py`` in it is ignored). If the canary
fails, the environment is broken: raise ``SandboxError`` so Prefect retries. If it passes,
the environment could have written a report and the codebase stopped it: ``AGENT_ERROR``
with no outcomes (every target test scores ``missing``).
"""

from __future__ import annotations

import json
import logging
import secrets
import signal
from pathlib import PurePosixPath
from typing import Any

from evoci.domain import OUTCOMES, TaskSpec, TestReport, TestStatus
from evoci.errors import HarnessTimeout, SandboxError
from evoci.sandbox.base import ExecResult, Sandbox

log = logging.getLogger(__name__)

REPORT_DIR = ".evoci"  # the harness folder (agents.base.HARNESS_DIR), never committed
DETAIL_LIMIT = 8 * 1024  # characters of failure text kept per test
TAIL_LINES = 60
# Report fields evoci never reads. Streams matter most: a test printing 100 MB would
# otherwise put 100 MB into the report.
_OMIT = ("streams", "log", "keywords", "warnings", "traceback")
# Signals a process raises on itself when its own code crashes.
_CRASH_SIGNALS = frozenset(
    {signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL, signal.SIGABRT, signal.SIGSYS, signal.SIGTRAP}
)
_HOUSEKEEPING_TIMEOUT_S = 120.0
_CANARY = (
    "import pathlib, sys, pytest, pytest_jsonreport; "
    "p = pathlib.Path(sys.argv[1]); p.parent.mkdir(parents=True, exist_ok=True); p.write_text('ok')"
)


def pytest_command(task: TaskSpec, report_path: str) -> list[str]:
    """The task's pytest invocation plus the options evoci needs to read its results."""
    return [
        *task.test_command,
        "--json-report",
        f"--json-report-file={report_path}",
        "--json-report-omit",
        *_OMIT,
        "-p",
        "no:cacheprovider",
        "-q",
    ]


def run_pytest(sandbox: Sandbox, task: TaskSpec, *, timeout: float, output_limit: int) -> TestReport:
    """Run ``task``'s tests in ``sandbox``; raise only for infrastructure failures (see module docstring)."""
    token = secrets.token_hex(8)
    report_path = f"{REPORT_DIR}/report-{token}.json"
    canary_path = f"{REPORT_DIR}/canary-{token}"
    env = {"PYTHONPATH": ":".join(task.pythonpath)}
    try:
        result = sandbox.exec(pytest_command(task, report_path), env=env, timeout=timeout, output_limit=output_limit)
        return _classify(sandbox, task, result, report_path, canary_path)
    finally:
        _remove(sandbox, report_path, canary_path)


def _classify(sandbox: Sandbox, task: TaskSpec, result: ExecResult, report_path: str, canary_path: str) -> TestReport:
    tail = _tail(result)
    common = {"exit_code": result.exit_code, "duration_s": result.duration_s, "output_tail": tail}
    if result.timed_out:
        return TestReport(status=TestStatus.TIMEOUT, **common)
    code = result.exit_code
    if code is None:
        raise HarnessTimeout(f"the sandbox lost the test process's exit status; output ends:\n{tail}")
    if code < 0 and -code not in _CRASH_SIGNALS:
        raise SandboxError(
            f"pytest was killed by {_signal_name(-code)}, which evoci did not send (out of memory, "
            f"or the host stopped it); give the sandbox more memory or retry. Output ends:\n{tail}"
        )
    if code == 4 and "while loading conftest" not in result.stdout + result.stderr:
        raise SandboxError(
            f"pytest rejected its command line (exit 4, usage error): check the task's test_command "
            f"{list(task.test_command)} and any addopts plugin missing from the environment. Output ends:\n{tail}"
        )
    report = _read_report(sandbox, report_path)
    if report is None:
        _require_canary(sandbox, task, canary_path, tail)
        return TestReport(status=TestStatus.AGENT_ERROR, **common)
    outcomes, details = _outcomes(report)
    status = TestStatus.OK if code in (0, 1) else TestStatus.AGENT_ERROR
    return TestReport(
        status=status, outcomes=outcomes, details=details, collection_errors=_collection_errors(report), **common
    )


def _read_report(sandbox: Sandbox, path: str) -> dict[str, Any] | None:
    try:
        raw = sandbox.read_file(path)
    except FileNotFoundError:
        return None
    try:
        report = json.loads(raw)
    except ValueError as exc:
        raise SandboxError(f"pytest-json-report wrote an unreadable report ({exc}); retry the test node") from exc
    if not isinstance(report, dict):
        raise SandboxError("pytest-json-report wrote a report that is not a JSON object; retry the test node")
    return report


def _require_canary(sandbox: Sandbox, task: TaskSpec, canary_path: str, tail: str) -> None:
    """Raise SandboxError unless the environment can import pytest's plugin and write a report."""
    first = task.test_command[0] if task.test_command else "python"
    python = first if PurePosixPath(first).name.startswith("python") else "python"
    canary = sandbox.exec([python, "-I", "-c", _CANARY, canary_path], timeout=_HOUSEKEEPING_TIMEOUT_S)
    if not canary.ok:
        raise SandboxError(
            "pytest wrote no report and the environment cannot run pytest-json-report or write "
            f"{REPORT_DIR}/ (canary: {_tail(canary, 10)}); rebuild the environment or free disk space. "
            f"pytest's output ends:\n{tail}"
        )


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


def _remove(sandbox: Sandbox, *paths: str) -> None:
    """Delete the report and canary files. ``.evoci/`` is never committed, so a failure only warns."""
    result = sandbox.exec(["rm", "-f", "--", *paths], timeout=_HOUSEKEEPING_TIMEOUT_S)
    if not result.ok:
        log.warning("could not remove %s from the workspace: %s", ", ".join(paths), _tail(result, 5))


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
