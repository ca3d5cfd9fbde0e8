"""The harness's end of the launcher's channel: one frame or nothing, and a report checked against a tally."""

from __future__ import annotations

import hashlib
import json

from evoci.grading.channel import cross_check, read_frame
from evoci.sandbox.base import ExecResult

TESTS = ["t.py::a", "t.py::b"]


def frame(outcomes: dict[str, str], tally: dict[str, str] | None = None, exit_code: int = 1) -> str:
    tally = outcomes if tally is None else tally
    tally_text = "".join(f"{w}\t{'passed' if w != 'call' else o}\t0\t{t}\n" for t, o in tally.items()
                         for w in ("setup", "call", "teardown")) + f"end\t{exit_code}\t\n"
    report = json.dumps({"tests": [{"nodeid": t, "outcome": o} for t, o in outcomes.items()]})
    body = (tally_text + report).encode()
    digest = hashlib.sha256(body).hexdigest()
    return f"EVOCI-REPORT {exit_code} {len(tally_text)} {len(report)} 0 {digest}\n" + body.decode()


def result(stdout: str, exit_code: int = 0) -> ExecResult:  # the launcher ends 0 after its own frame
    return ExecResult(exit_code=exit_code, stdout=stdout, stderr="", duration_s=1.0)


def test_one_frame_that_agrees_with_its_tally_is_graded_as_reported():
    got = read_frame(result(frame({"t.py::a": "passed", "t.py::b": "failed"})))
    assert got.void is None and got.tally_ended
    assert cross_check({"t.py::a": "passed", "t.py::b": "failed"}, got) == ({"t.py::a": "passed", "t.py::b": "failed"}, [])


def test_a_second_frame_text_around_it_or_a_killed_launcher_voids_the_report():
    honest = frame({"t.py::a": "failed", "t.py::b": "failed"})
    forged = frame({"t.py::a": "passed", "t.py::b": "passed"})
    assert "frame" in read_frame(result(forged + honest)).void
    assert read_frame(result("noise\n" + honest)).void
    assert read_frame(result(honest + "trailing")).void
    assert "stopped" in read_frame(result(forged, exit_code=137)).void  # one frame, but the launcher was killed
    assert read_frame(result(honest)).void is None
    # the collector's own frame for a killed test process: nothing of its report is read
    killed = read_frame(result(frame({"t.py::a": "passed", "t.py::b": "passed"}, exit_code=-9)))
    assert killed.void is None and killed.report is None
    # a frame that says 137 (or -9), then the collector killed to match: the launcher never ends so after its
    # own frame. Before, the tested code wrote a frame of all passes saying 137 to bubblewrap's PID 1's standard
    # output, killed the collector with SIGKILL, and the report was read (and the bytecode section kept).
    for says in (137, -9, 1):
        for ended in (137, -9, 1, 143):
            forged_killed = read_frame(result(frame({"t.py::a": "passed", "t.py::b": "passed"}, exit_code=says),
                                              exit_code=ended))
            assert "stopped" in forged_killed.void and forged_killed.report is None and not forged_killed.bytecode


def test_a_report_the_tally_contradicts_is_graded_from_the_lower_and_flagged():
    rewritten = read_frame(result(frame({"t.py::a": "passed", "t.py::b": "passed"},
                                        tally={"t.py::a": "passed", "t.py::b": "failed"})))
    graded, flags = cross_check({"t.py::a": "passed", "t.py::b": "passed"}, rewritten)
    assert graded == {"t.py::a": "passed", "t.py::b": "failed"}
    assert len(flags) == 1 and "disagree on 1 test" in flags[0] and "t.py::b: report passed, tally failed" in flags[0]


def test_a_report_nested_too_deeply_to_read_is_no_report():
    # json.loads raises RecursionError on it: before, grading raised and the node was retried as the harness's fault.
    tally = "".join(f"{w}\tpassed\t0\tt.py::a\n" for w in ("setup", "call", "teardown")) + "end\t1\t\n"
    report = "[" * 100_000 + "]" * 100_000
    body = (tally + report).encode()
    stdout = f"EVOCI-REPORT 1 {len(tally)} {len(report)} 0 {hashlib.sha256(body).hexdigest()}\n" + body.decode()
    got = read_frame(result(stdout))
    assert got.void is None and got.report is None and got.problem == "it is not JSON"


def test_a_report_not_in_the_plugins_shape_is_no_report():
    # Code under test can rewrite the report file after the plugin wrote it (a pytest_unconfigure
    # hook): each of these once raised in the grader, and the node failed as the harness's fault.
    def framed(report: str) -> str:
        tally = "".join(f"{w}\tpassed\t0\tt.py::a\n" for w in ("setup", "call", "teardown")) + "end\t1\t\n"
        body = (tally + report).encode("utf-8", errors="surrogateescape")
        return f"EVOCI-REPORT 1 {len(tally)} {len(report)} 0 {hashlib.sha256(body).hexdigest()}\n" + \
            body.decode("utf-8", errors="surrogateescape")

    hostile = [{"tests": [1]}, {"tests": {"a": 1}}, {"tests": True}, {"collectors": True}, {"collectors": [1]},
               {"tests": [{"outcome": "passed"}]}, {"tests": [{"nodeid": ["a"], "outcome": "passed"}]},
               {"tests": [{"nodeid": 5, "outcome": "passed"}]}, {"tests": [{"nodeid": "t.py::a", "setup": 5}]},
               {"tests": [{"nodeid": "t.py::a", "outcome": "failed", "call": {"longrepr": {"x": 1}}}]},
               {"collectors": [{"outcome": "failed"}]}, {"collectors": [{"nodeid": "t.py", "longrepr": 5}]},
               {"tests": [{"nodeid": "\udcff", "outcome": "passed"}]}]
    for report in hostile:
        got = read_frame(result(framed(json.dumps(report))))
        assert got.void is None and got.report is None and "shape" in got.problem, report
    honest = {"tests": [{"nodeid": "t.py::a", "outcome": "failed", "call": {"outcome": "failed", "longrepr": "boom"}}],
              "collectors": [{"nodeid": "", "outcome": "passed", "longrepr": None}]}
    assert read_frame(result(framed(json.dumps(honest)))).report == honest
