"""What a run holds is printed as text: a reason, test id or message that reads like console
markup (`[/testbed-/testbed]`, `[bold]`) is shown as it is and never ends the command."""

from __future__ import annotations

import duckdb
from rich.console import Console

import evoci.sql
from evoci.report import print_completeness
from evoci.verdict import exit_code, print_refused
from tests.sql.swe_ci_rows import add_run, add_task

# A parametrised test id of a real record, and an agent-written message.
ODD = "tests/unit/test_config.py::test_to_relpath[/testbed-/testbed] [bold]not bold[/bold] [/]"


def test_brackets_in_what_the_run_holds_are_printed_as_written(tmp_path):
    db = tmp_path / "evoci.duckdb"
    with duckdb.connect(str(db)) as con:
        evoci.sql.apply(con)
        add_run(con, "r1", max_iterations=2)
        con.execute("update runs set dataset_tasks = 2 where run_id = 'r1'")
        add_task(con, "r1", "t[/x]1", targets="ab", passed=["a"], status="environment_error")
        con.execute("update tasks set reason = ? where task_id = 't[/x]1'", [f"environment_error: {ODD} absent"])
        con.execute("insert into failures values ('r1', '', -1, 'dataset', 'input', 'DatasetError', ?, now())",
                    [f"records.jsonl:2: {ODD}"])
    console = Console(record=True, width=400)
    print_refused(console, [("t[/x]2", f"changed: {ODD}")])
    assert exit_code(db, "r1", console, refused=[("t[/x]2", ODD)]) == 1
    print_completeness(db, "r1", console)
    shown = console.export_text()
    assert shown.count(ODD) == 3, shown  # refused, not scored (the task's reason), skipped (the record)
    assert "t[/x]1" in shown and "t[/x]2" in shown
