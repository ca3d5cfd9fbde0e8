"""run_completeness and the run-level views of every protocol: is every task of the dataset scored?"""

from __future__ import annotations

from tests.sql import other_rows as other
from tests.sql.swe_ci_rows import add_run, add_task, rows

PASS = "passed"


def failure(con, run_id: str, message: str) -> None:
    con.execute("insert into failures values (?, '', -1, 'dataset', 'input', 'DatasetError', ?, now())",
                [run_id, message])


def test_a_run_is_complete_only_when_every_task_of_its_dataset_is_scored(con):
    # SWE-CI, 5 dataset lines: one solved, one lost to infrastructure, one bad line, two never started.
    add_run(con, "ci", max_iterations=2)
    con.execute("update runs set dataset_tasks = 5 where run_id = 'ci'")
    add_task(con, "ci", "solved", targets="ab", passed=["a", "ab"])
    add_task(con, "ci", "lost", targets="ab", passed=["a"], status="infra_error")
    failure(con, "ci", "tasks.jsonl:3: not JSON")
    # SWE-CI, the whole dataset scored.
    add_run(con, "ci_whole", max_iterations=2)
    con.execute("update runs set dataset_tasks = 1 where run_id = 'ci_whole'")
    add_task(con, "ci_whole", "solved", targets="ab", passed=["a", "ab"])
    # SWE-EVO (dataset size unknown): one resolved, one still running, one missing prediction (the agent's 0).
    other.add_run(con, "evo", "swe-evo")
    other.swe_evo_instance(con, "evo", "ok", f2p={"t": PASS})
    other.swe_evo_instance(con, "evo", "running", f2p={"t": PASS}, status="running")
    other.swe_evo_instance(con, "evo", "no-pred", f2p={"t": PASS}, prediction=None)
    # NITR: one probe never evaluated (no step recorded).
    other.add_run(con, "nitr", "nitr")
    other.add_task(con, "nitr", "probe", "nitr", dimension="D1", granularity="micro")
    # SWE-Bench-CL: one issue with an attempt, one whose input was bad.
    other.add_run(con, "cl", "swe-bench-cl")
    other.add_task(con, "cl", "i1", "swe-bench-cl", sequence_id="s", sequence_position=1)
    other.add_iteration(con, "cl", "i1", 0)
    other.add_task(con, "cl", "i2", "swe-bench-cl", status="input_error", sequence_id="s", sequence_position=2)

    assert rows(con, "select * from run_completeness order by run_id") == [
        dict(run_id="ci", tasks_expected=5, records_not_loaded=1, tasks_unscored=4, complete=False,
             unscored_reasons={"dataset_error": 1, "infra_error": 1, "not_started": 2}),
        dict(run_id="ci_whole", tasks_expected=1, records_not_loaded=0, tasks_unscored=0, unscored_reasons={}, complete=True),
        dict(run_id="cl", tasks_expected=2, records_not_loaded=0, tasks_unscored=1, unscored_reasons={"input_error": 1}, complete=False),
        dict(run_id="evo", tasks_expected=3, records_not_loaded=0, tasks_unscored=1, unscored_reasons={"incomplete": 1}, complete=False),
        dict(run_id="nitr", tasks_expected=1, records_not_loaded=0, tasks_unscored=1, unscored_reasons={"not_evaluated": 1},
             complete=False),
    ]
    expected = {r["run_id"]: r for r in rows(con, "select run_id, tasks_expected, tasks_unscored, unscored_reasons, "
                                                 "complete from run_completeness")}
    for view in ("swe_ci_evoscore_runs", "swe_ci_solved_runs", "swe_ci_zero_regression_runs", "swe_evo_runs",
                 "nitr_runs", "cl_run_metrics_default"):
        for row in rows(con, f"select run_id, tasks_expected, tasks_unscored, unscored_reasons, complete from {view}"):
            assert row == expected[row["run_id"]], view
    assert {r["run_id"] for r in rows(con, "select run_id from swe_ci_evoscore_runs")} == {"ci", "ci_whole"}
