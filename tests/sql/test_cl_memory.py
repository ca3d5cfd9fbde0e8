"""cl_memory: the experiences of M(i) at every memory stage, from a few given rows."""

from __future__ import annotations

from datetime import datetime


def test_memory_at_stage_i_holds_the_experiences_stored_up_to_i(con):
    for j in (1, 2, 3):
        con.execute("insert into tasks (run_id, task_id, protocol, status, sequence_id, sequence_position, updated_at) "
                    "values ('r', ?, 'swe-bench-cl', 'done', 's', ?, now())", [f"t{j}", j])
    for j, outcome in ((1, "resolved"), (2, "unresolved")):  # issue 3 processed but not stored (e.g. memory off later)
        con.execute("insert into cl_experiences values ('r', 's', ?, ?, 'p', 'sum', ?, 'why', 10, 'hashing-256', ?)",
                    [j, f"t{j}", outcome, datetime(2026, 1, 1)])
    con.execute("insert into cl_experiences values ('r', 'other', 1, 'x1', 'p', 'sum', 'resolved', 'why', 10, 'h', ?)",
                [datetime(2026, 1, 1)])
    rows = con.execute("select memory_stage, task_id, stored_at, outcome from cl_memory where sequence_id = 's' "
                       "order by all").fetchall()
    assert rows == [(1, "t1", 1, "resolved"),
                    (2, "t1", 1, "resolved"), (2, "t2", 2, "unresolved"),
                    (3, "t1", 1, "resolved"), (3, "t2", 2, "unresolved")]
    # a sequence with no tasks rows has no stages: nothing is listed for it
    assert con.execute("select count(*) from cl_memory where sequence_id = 'other'").fetchone() == (0,)
