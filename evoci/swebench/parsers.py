"""Log parsers: a test command's output → per-test outcomes, by the parser name a record gives.

SWE-bench-format records name a parser (``log_parser``) and list their F2P/P2P tests in that
parser's id format, so grading must read the log the same way. The pytest ``-rA`` parsers
take the first whitespace-separated token after the status word as the test id: a
parametrised id with a space (``test_x[a b]``) is **truncated** (``test_x[a``), exactly as
the records' ids are. Two tests truncated to the same id **collide**; evoci records every
collision and keeps the worse outcome (a failing member fails the id), never whichever
line happened to come last.

Outcomes use evoci's vocabulary (``domain.OUTCOMES``): PASSED → passed, FAILED → failed,
ERROR → error, SKIPPED → skipped, XFAIL → xfailed, XPASS → xpassed. The official mapping
(PASSED and XFAIL pass; FAILED, ERROR and absent fail; SKIPPED neither) is applied by the
views, not here.

Register a parser for another runner (django, sympy for SWE-Bench-CL) with ``@parser("name")``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from evoci.errors import InputError

STATUS = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped",
          "XFAIL": "xfailed", "XPASS": "xpassed"}
# Worst first: when ids collide, the outcome earliest in this list wins.
SEVERITY = ("error", "failed", "xpassed", "skipped", "xfailed", "passed")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_BRACKETED = re.compile(r"^(.*?)\[(.*)\]$")
_PROGRESS = re.compile(r"\s\[\s*\d+%\]")


@dataclass
class ParsedLog:
    """Per-test outcomes read from one log, and the ids several tests were truncated to."""

    outcomes: dict[str, str] = field(default_factory=dict)
    collisions: dict[str, int] = field(default_factory=dict)  # id → how many result lines it got

    def add(self, test_id: str, outcome: str) -> None:
        if test_id in self.outcomes:
            self.collisions[test_id] = self.collisions.get(test_id, 1) + 1
            if SEVERITY.index(outcome) >= SEVERITY.index(self.outcomes[test_id]):
                return
        self.outcomes[test_id] = outcome


Parser = Callable[[str], ParsedLog]
PARSERS: dict[str, Parser] = {}


def parser(*names: str) -> Callable[[Parser], Parser]:
    """Register a parser under one or more names (the records' ``log_parser`` values)."""
    def register(fn: Parser) -> Parser:
        for name in names:
            PARSERS[name] = fn
        return fn
    return register


def get_parser(name: str) -> Parser:
    """The parser ``name`` names, or an InputError listing the known ones."""
    try:
        return PARSERS[name]
    except KeyError:
        raise InputError(f"unknown log parser {name!r} — choose one of: {', '.join(sorted(PARSERS))}") from None


def _status_first(line: str) -> tuple[str, str] | None:
    """``PASSED tests/x.py::t`` → (outcome, first token after the status), for -rA summary lines."""
    word, _, rest = line.partition(" ")
    if word not in STATUS or not rest.strip():
        return None
    token = rest.split()[0]
    if token.startswith("[") and token.endswith("]"):  # "SKIPPED [2] path:line: reason" names no test
        return None
    return STATUS[word], token


@parser("parse_log_pytest", "pytest")
def parse_pytest(log: str) -> ParsedLog:
    """pytest ``-rA`` short summary lines: ``STATUS <id>[ - message]``."""
    parsed = ParsedLog()
    for line in log.splitlines():
        found = _status_first(line.strip())
        if found:
            parsed.add(found[1], found[0])
    return parsed


@parser("parse_log_pytest_options")
def parse_pytest_options(log: str) -> ParsedLog:
    """Like ``parse_log_pytest``, but a parameter that is an absolute path keeps only its last part.

    ``test_x[/tmp/abc/file.py]`` → ``test_x[/file.py]``: such ids depend on the machine that
    ran the tests, so the records keep the stable tail (URLs ``//…`` and globs ``*`` are kept whole).
    """
    parsed = ParsedLog()
    for line in log.splitlines():
        found = _status_first(line.strip())
        if not found:
            continue
        outcome, test_id = found
        match = _BRACKETED.match(test_id)
        if match:
            name, option = match.groups()
            if option.startswith("/") and not option.startswith("//") and "*" not in option:
                option = "/" + option.rsplit("/", 1)[-1]
            test_id = f"{name}[{option}]"
        parsed.add(test_id, outcome)
    return parsed


@parser("parse_log_pytest_v2", "parse_log_pydantic")
def parse_pytest_v2(log: str) -> ParsedLog:
    """``-rA`` lines with colour codes removed, plus verbose lines of old pytest (``<id> STATUS``).

    evoci reads ``parse_log_pydantic`` records with this parser too: both are -rA summaries.
    """
    return _parse_v2(log, strip_progress=False)


@parser("parse_log_pytest_pydantic")
def parse_pytest_pydantic(log: str) -> ParsedLog:
    """``parse_log_pytest_v2`` for ``-vv`` runs: a verbose ``FAILED [ 42%]`` line loses its progress mark first."""
    return _parse_v2(log, strip_progress=True)


def _parse_v2(log: str, *, strip_progress: bool) -> ParsedLog:
    parsed = ParsedLog()
    for raw in log.splitlines():
        line = _ANSI.sub("", raw).strip()
        if strip_progress:
            line = _PROGRESS.sub(" ", line).strip()
        found = _status_first(line)
        if found:
            parsed.add(found[1], found[0])
            continue
        parts = line.split()
        if len(parts) >= 2 and parts[-1] in STATUS and "::" in parts[0]:
            parsed.add(parts[0], STATUS[parts[-1]])
    return parsed


@parser("json_report", "pytest_json_report")
def parse_json_report(report: str) -> ParsedLog:
    """A pytest-json-report file: node ids untruncated; setup/teardown failures are errors."""
    parsed = ParsedLog()
    data = json.loads(report) if report.strip() else {}
    for test in data.get("tests") or []:
        outcome = test.get("outcome")
        if any((test.get(when) or {}).get("outcome") == "failed" for when in ("setup", "teardown")):
            outcome = "error"
        parsed.add(test["nodeid"], outcome if outcome in SEVERITY else "error")
    return parsed


# django's runner at --verbosity 2: "test_name (module.Class) ... ok"; a test with a docstring
# prints "test_name (module.Class)" then "First docstring line ... ok" on the next line.
_DJANGO_STATUS = {"ok": "passed", "OK": "passed", "FAIL": "failed", "ERROR": "error", "expected failure": "xfailed",
                  "unexpected success": "xpassed"}
_DJANGO_TEST = re.compile(r"^(\w+) \(([\w.]+)\)")


@parser("parse_log_django", "django")
def parse_django(log: str) -> ParsedLog:
    """django ``runtests.py --verbosity 2`` lines → ids in the records' form ``test_x (pkg.tests.Class)``.

    Python ≥ 3.11 names a test ``test_x (pkg.tests.Class.test_x)``; the trailing method name
    is dropped so the ids match the records'.
    """
    parsed, pending = ParsedLog(), None
    for raw in log.splitlines():
        line = _ANSI.sub("", raw).rstrip()
        test = _DJANGO_TEST.match(line)
        head, sep, status = line.rpartition(" ... ")
        if test:
            name, where = test.groups()
            where = where[: -len(name) - 1] if where.endswith(f".{name}") else where
            pending = f"{name} ({where})"
        if not sep or pending is None:
            continue
        outcome = _DJANGO_STATUS.get(status.strip()) or ("skipped" if status.startswith("skipped") else None)
        if outcome is not None:
            parsed.add(pending, outcome)
            pending = None
    return parsed


# sympy's bin/test --verbose: one "test_name STATUS" line per test under its file's header.
_SYMPY_STATUS = {"ok": "passed", "F": "failed", "E": "error", "f": "xfailed", "X": "xpassed", "s": "skipped",
                 "skipped": "skipped", "w": "skipped"}
_SYMPY_LINE = re.compile(r"^(test_\w+)\s+(ok|F|E|f|X|s|w|skipped)\b")


@parser("parse_log_sympy", "sympy")
def parse_sympy(log: str) -> ParsedLog:
    """sympy ``bin/test --verbose`` lines ``test_name ok|F|E|f|X|s`` → ids ``test_name``, as the records write them."""
    parsed = ParsedLog()
    for raw in log.splitlines():
        match = _SYMPY_LINE.match(_ANSI.sub("", raw).strip())
        if match:
            parsed.add(match.group(1), _SYMPY_STATUS[match.group(2)])
    return parsed
