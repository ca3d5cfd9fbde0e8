"""The django and sympy log parsers SWE-Bench-CL's records need (ids as those records write them)."""

from __future__ import annotations

from evoci.swebench.parsers import get_parser

DJANGO_LOG = """\
Testing against Django installed in '/repo/django' with up to 1 processes
Creating test database for alias 'default'...
test_add (admin_views.tests.AdminViewTests) ... ok
test_change (admin_views.tests.AdminViewTests) ... FAIL
test_delete (admin_views.tests.AdminViewTests) ... ERROR
test_gone (admin_views.tests.AdminViewTests) ... skipped 'no database feature'
test_flaky (admin_views.tests.AdminViewTests) ... expected failure
test_lucky (admin_views.tests.AdminViewTests) ... unexpected success
test_documented (admin_views.tests.AdminViewTests)
A test with a docstring: its status lands on the next line. ... ok
test_new_python (forms_tests.tests.FormTests.test_new_python) ... ok
======================================================================
FAIL: test_change (admin_views.tests.AdminViewTests)
----------------------------------------------------------------------
Ran 8 tests in 0.120s
"""

SYMPY_LOG = """\
============================= test process starts ==============================
executable:         /usr/bin/python3  (3.9.0-final-0) [CPython]
sympy/core/tests/test_basic.py[5]
test_structure ok
test_equality F
test_matches_basic E
test_has f
test_subs s
________________________________________________________________________________
___________ sympy/core/tests/test_basic.py:test_equality _______________________
============= tests finished: 1 passed, 1 failed, 1 exceptions in 0.30 seconds =
"""


def test_django_runner_lines_give_record_style_ids():
    parsed = get_parser("parse_log_django")(DJANGO_LOG)
    assert parsed.outcomes == {
        "test_add (admin_views.tests.AdminViewTests)": "passed",
        "test_change (admin_views.tests.AdminViewTests)": "failed",
        "test_delete (admin_views.tests.AdminViewTests)": "error",
        "test_gone (admin_views.tests.AdminViewTests)": "skipped",
        "test_flaky (admin_views.tests.AdminViewTests)": "xfailed",
        "test_lucky (admin_views.tests.AdminViewTests)": "xpassed",
        "test_documented (admin_views.tests.AdminViewTests)": "passed",
        "test_new_python (forms_tests.tests.FormTests)": "passed",
    }


def test_sympy_bin_test_lines_give_function_names():
    parsed = get_parser("parse_log_sympy")(SYMPY_LOG)
    assert parsed.outcomes == {"test_structure": "passed", "test_equality": "failed", "test_matches_basic": "error",
                               "test_has": "xfailed", "test_subs": "skipped"}
