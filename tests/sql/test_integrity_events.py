"""integrity_events: the iterations whose grade the harness protected, with the event named."""

from __future__ import annotations


def _iteration(con, iteration, tampered, discarded, flags):
    con.execute(
        """insert into iterations (run_id, task_id, iteration, attempt, status, tampered_files, discarded_files,
                                   integrity_flags) values ('r', 't', ?, 0, 'ok', ?, ?, ?)""",
        [iteration, tampered, discarded, flags],
    )


def test_only_iterations_with_an_event_appear_and_a_flag_outranks_tampering(con):
    _iteration(con, 0, [], [], [])
    _iteration(con, 1, ["conftest.py"], [], [])
    _iteration(con, 2, ["tests/test_a.py"], ["NOTES.md"], ["src/x.py: imports the test runner: import _pytest"])
    _iteration(con, 3, [], ["NOTES.md"], [])
    _iteration(con, 4, None, None, None)  # written before the columns existed
    rows = con.execute("select iteration, event, tampered_files, discarded_files, integrity_flags "
                       "from integrity_events order by iteration").fetchall()
    assert rows == [
        (1, "tampered", ["conftest.py"], [], []),
        (2, "flagged", ["tests/test_a.py"], ["NOTES.md"], ["src/x.py: imports the test runner: import _pytest"]),
        (3, "discarded", [], ["NOTES.md"], []),
    ]
