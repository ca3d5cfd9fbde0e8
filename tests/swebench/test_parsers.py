"""Log parsers: -rA summaries with the records' id truncation, collisions, json-report, the registry."""

from __future__ import annotations

import json

import pytest

from evoci.errors import InputError
from evoci.swebench.parsers import PARSERS, get_parser, parse_json_report, parse_pytest, parse_pytest_options, parse_pytest_v2

LOG = """\
============================= short test summary info ==============================
PASSED tests/test_a.py::test_ok
PASSED tests/test_a.py::test_param[a = 1-1]
FAILED tests/test_a.py::test_param[a = 2-2] - assert 2 == 3
ERROR tests/test_a.py::test_setup - RuntimeError: boom
SKIPPED [1] tests/test_a.py:40: not on this platform
XFAIL tests/test_a.py::test_known - bug 12
XPASS tests/test_a.py::test_lucky
PASSED tests/test_a.py::test_path[/tmp/pytest-7/data/file.txt]
========================= 4 passed, 1 failed, 1 error in 0.1s ======================
"""


def test_rA_ids_are_truncated_at_the_first_space_and_collisions_keep_the_worse_outcome():
    parsed = parse_pytest(LOG)
    assert parsed.outcomes == {
        "tests/test_a.py::test_ok": "passed",
        "tests/test_a.py::test_param[a": "failed",  # two tests, one id: the failing one decides
        "tests/test_a.py::test_setup": "error",
        "tests/test_a.py::test_known": "xfailed",
        "tests/test_a.py::test_lucky": "xpassed",
        "tests/test_a.py::test_path[/tmp/pytest-7/data/file.txt]": "passed",
    }
    assert parsed.collisions == {"tests/test_a.py::test_param[a": 2}
    # -rA reports a skip by location, not by id: the skipped test is absent (a fail, officially)
    assert not any("40" in t for t in parsed.outcomes)


def test_the_options_parser_keeps_only_the_tail_of_an_absolute_path_parameter():
    parsed = parse_pytest_options(LOG)
    assert parsed.outcomes["tests/test_a.py::test_path[/file.txt]"] == "passed"
    assert "tests/test_a.py::test_param[a" in parsed.collisions


def test_v2_reads_coloured_and_old_style_lines():
    log = "\x1b[32mPASSED\x1b[0m tests/t.py::test_a\ntests/t.py::test_b FAILED\nnoise PASSED\n"
    assert parse_pytest_v2(log).outcomes == {"tests/t.py::test_a": "passed", "tests/t.py::test_b": "failed"}


def test_json_report_keeps_whole_ids_and_makes_setup_failures_errors():
    report = {"tests": [
        {"nodeid": "tests/t.py::test_x[a b]", "outcome": "passed"},
        {"nodeid": "tests/t.py::test_y", "outcome": "passed", "teardown": {"outcome": "failed"}},
        {"nodeid": "tests/t.py::test_z", "outcome": "skipped"},
    ]}
    assert parse_json_report(json.dumps(report)).outcomes == {
        "tests/t.py::test_x[a b]": "passed", "tests/t.py::test_y": "error", "tests/t.py::test_z": "skipped"}


def test_the_registry_knows_the_records_parser_names_and_lists_them_when_one_is_unknown():
    for name in ("parse_log_pytest", "parse_log_pytest_options", "parse_log_pytest_v2", "parse_log_pydantic", "json_report"):
        assert name in PARSERS
    with pytest.raises(InputError, match="unknown log parser 'parse_log_django' — choose one of: .*parse_log_pytest"):
        get_parser("parse_log_django")
