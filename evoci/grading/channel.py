"""The harness's end of the launcher's channel: one frame, checked, and a report cross-checked by a tally.

``evoci.grading.launcher`` writes exactly one frame on the sandboxed command's standard output.
What arrives is trusted only if it is that one frame and nothing else, and if the launcher ended 0,
as its collector does after writing its own frame and never otherwise (a collector killed before it
wrote would leave a frame someone else wrote as the only one; no signal, nor Python's own failure,
ends a process with 0). Otherwise the report is **void**: the
iteration is the agent's outcome, nothing of it passes, and it is flagged — something in the
sandbox wrote to the harness's channel, and only the tested code runs there.

A report that survives is compared, test by test, with the launcher's independent tally of stage
outcomes. Where they disagree, the lower outcome is graded and the disagreement is flagged.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from evoci.grading.launcher import FRAME
from evoci.sandbox.base import ExecResult
from evoci.untrusted import json_loads

# Lowest first: what a disagreement between the report and the tally is graded as.
_LOWEST_FIRST = ("missing", "error", "failed", "xpassed", "skipped", "xfailed", "passed")
_SHOWN = 5  # disagreements named in a flag


@dataclass
class Frame:
    """What the launcher sent: the test process's exit, its report (None when it wrote none), the tally."""

    exit_code: int | None = None
    report: dict[str, Any] | None = None
    problem: str | None = None  # why there is no report, for people
    tally: dict[str, str] = field(default_factory=dict)
    tally_ended: bool = False  # the tally's last line came (pytest.main returned)
    runtime_changes: list[str] = field(default_factory=list)
    void: str | None = None  # why the channel cannot be trusted at all
    forged_xfails: list[str] = field(default_factory=list)  # tests the tested code made "expected to fail"
    bytecode: bytes = b""  # test modules rewritten before the tree ran (evoci.grading.bytecode reads it)


def read_frame(result: ExecResult) -> Frame:
    """The one frame on ``result``'s standard output (``result`` did not time out)."""
    data = result.stdout.encode("utf-8", errors="surrogateescape")
    if not data:
        return Frame(problem="the launcher wrote nothing")
    header, newline, rest = data.partition(b"\n")
    try:
        magic, code, tally_size, report_size, code_size, digest = header.split(b" ")
        exit_code, tally_size, report_size, code_size = int(code), int(tally_size), int(report_size), int(code_size)
        if magic + b" " != FRAME or not newline or min(tally_size, report_size, code_size) < 0:
            raise ValueError
    except ValueError:
        return Frame(void=f"the channel carried {_count(data)} frame(s) and text that is not evoci's")
    size = tally_size + report_size + code_size
    body, extra = rest[:size], rest[size:]
    if hashlib.sha256(body).hexdigest().encode() != digest:
        return Frame(void="the frame does not match its checksum (written over, or cut short)")
    if extra:
        return Frame(void=f"the channel carried {1 + _count(extra)} frame(s) or text after the report: "
                          "something besides the harness wrote to it")
    if result.exit_code != 0:  # the collector exits 0 after its frame, and only then (evoci.grading.launcher)
        return Frame(void=f"the frame says the tests ended with {exit_code} but the launcher ended with "
                          f"{result.exit_code}, not 0 as after writing its own frame: it was stopped after "
                          "someone else wrote")
    frame = Frame(exit_code=exit_code, bytecode=body[tally_size + report_size:])
    _read_tally(frame, body[:tally_size].decode("utf-8", errors="surrogateescape"))
    report = body[tally_size:tally_size + report_size]
    if exit_code < 0:  # pytest writes its report as it ends; a process killed by a signal has none of its own
        frame.problem = "the test process was killed by a signal: no report of it is read"
        return frame
    if not report:
        frame.problem = "pytest wrote no report"
        return frame
    try:
        parsed = json_loads(report)
    except ValueError:
        frame.problem = "it is not JSON"
        return frame
    if not isinstance(parsed, dict):
        frame.problem = "it is not a JSON object"
    elif (shape := _misshapen(parsed)) is not None:
        frame.problem = f"it is not the report plugin's shape ({shape})"
    else:
        frame.report = parsed
    return frame


def _misshapen(report: dict[str, Any]) -> str | None:
    """What in ``report`` is not as pytest-json-report writes it, or None.

    Code under test can rewrite the report file after the plugin wrote it; whatever it writes must
    be read as no report (nothing passes, flagged), never raise in the grader. Every field the
    graders read is checked: ``tests`` and ``collectors`` lists of objects whose ``nodeid`` is text
    that can be stored, ``outcome`` text, stages objects, ``longrepr`` text.
    """

    def text(value: Any) -> bool:
        if not isinstance(value, str):
            return False
        try:
            value.encode("utf-8")  # a lone surrogate cannot be stored
        except UnicodeEncodeError:
            return False
        return True

    def optional_text(value: Any) -> bool:
        return value is None or text(value)

    for key in ("tests", "collectors"):
        items = report.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            return f"{key} is not a list"
        for item in items:
            if not isinstance(item, dict) or not text(item.get("nodeid")):
                return f"an entry of {key} without a text nodeid"
            if not optional_text(item.get("outcome")) or not optional_text(item.get("longrepr")):
                return f"{key} entry {item['nodeid']!r} with an outcome or longrepr that is not text"
            for when in ("setup", "call", "teardown"):
                stage = item.get(when)
                if stage is None:
                    continue
                if not isinstance(stage, dict) or not optional_text(stage.get("outcome")) \
                        or not optional_text(stage.get("longrepr")):
                    return f"{key} entry {item['nodeid']!r} with a malformed {when} stage"
    return None


def cross_check(reported: dict[str, str], frame: Frame) -> tuple[dict[str, str], list[str]]:
    """The outcomes to grade (the lower of report and tally for each test) and the flags of any disagreement."""
    flags = []
    if not frame.tally_ended:
        flags.append("the harness's tally of outcomes ended before pytest did (its channel was cut or written over)")
    differ = {t: (reported.get(t, "missing"), frame.tally.get(t, "missing"))
              for t in reported.keys() | frame.tally.keys()
              if reported.get(t, "missing") != frame.tally.get(t, "missing")}
    graded = dict(reported)
    for test, pair in differ.items():
        graded[test] = min(pair, key=_LOWEST_FIRST.index)
    forged = sorted(set(frame.forged_xfails) & differ.keys())
    if forged:
        flags.append(f"the tested code made {len(forged)} test(s) expected to fail (an XFailed raised outside the "
                     f"tests), graded failed: {'; '.join(forged[:_SHOWN])}")
    rest = {t: pair for t, pair in differ.items() if t not in forged}
    if rest:
        named = "; ".join(f"{t}: report {r}, tally {y}" for t, (r, y) in sorted(rest.items())[:_SHOWN])
        flags.append(f"the report and the harness's own tally disagree on {len(rest)} test(s), "
                     f"graded from the lower (report rewritten in the test process?): {named}")
    return graded, flags


def _read_tally(frame: Frame, text: str) -> None:
    """Stage lines ``when<TAB>outcome<TAB>xfail<TAB>nodeid``, then ``end<TAB>code<TAB>changed…``.

    ``xfail``: 0, 1 (an expected failure), 2 (made expected by the tested code: its XFailed was
    raised outside the tests, ``raised_by_tests`` in the launcher) — a failure.
    """
    stages: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        parts = line.split("\t", 3)
        if parts[0] == "end" and len(parts) >= 2:
            frame.tally_ended = True
            frame.runtime_changes = [p for p in line.split("\t")[2:] if p]
        elif len(parts) == 4 and parts[0] in ("setup", "call", "teardown"):
            when, outcome, xfail, nodeid = parts
            if xfail == "2" and when == "call":
                frame.forged_xfails.append(nodeid)
                stages.setdefault(nodeid, {})[when] = "failed"
                continue
            stages.setdefault(nodeid, {})[when] = _category(when, outcome, xfail == "1")
    for nodeid, by_stage in stages.items():
        failed_around = any(by_stage.get(w) == "error" for w in ("setup", "teardown"))
        worst = [c for c in by_stage.values() if c != "passed"]  # pytest-json-report keeps the last non-passed
        frame.tally[nodeid] = "error" if failed_around else (worst[-1] if worst else "passed")


def _category(when: str, outcome: str, xfail: bool) -> str:
    """One stage's outcome, as pytest's own ``pytest_report_teststatus`` names it."""
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    if outcome == "skipped":
        return "xfailed" if xfail else "skipped"
    return "xpassed" if xfail and when == "call" else "passed"


def _count(data: bytes) -> int:
    return data.count(FRAME)
