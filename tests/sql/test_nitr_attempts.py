"""NITR over repeated attempts: nitr_attempts, nitr_stability, nitr_pass_at_k; nitr_probes = last attempt."""

from __future__ import annotations

import pytest

from tests.sql.other_rows import add_iteration, add_results, add_run, add_targets, add_task

CATEGORY_OUTCOMES = {  # functional, structural outcome of the final step for each category
    "Pass": ("passed", "passed"), "F": ("failed", "passed"), "S": ("passed", "failed"), "B": ("failed", "failed"),
}


def probe(con, task_id: str, categories: list[str | None], *, steps: int = 1) -> None:
    """One probe attempted once per entry; None = an attempt lost before any step finished (no rows)."""
    add_task(con, "r", task_id, "nitr", dimension="D1", granularity="micro" if steps == 1 else "multi-step")
    add_targets(con, "r", task_id, "functional", [f"{task_id}::f"])
    add_targets(con, "r", task_id, "structural", [f"{task_id}::s"])
    for attempt, category in enumerate(categories):
        if category is None:
            continue
        for step in range(1, steps):
            add_iteration(con, "r", task_id, step, attempt=attempt, status="not_graded")
        add_iteration(con, "r", task_id, steps, attempt=attempt, status="build_error" if category == "E" else "ok")
        if category != "E":
            f, s = CATEGORY_OUTCOMES[category]
            add_results(con, "r", task_id, steps, {f"{task_id}::f": f, f"{task_id}::s": s}, attempt=attempt)


@pytest.fixture
def runs(con):
    add_run(con, "r", "nitr")
    probe(con, "a", ["Pass", "Pass", "S", "Pass"])  # n 4, c 3
    probe(con, "b", ["S", "F", "F", "E"], steps=3)  # n 4, c 0; the last attempt is E
    probe(con, "c", ["Pass"])  # one attempt
    probe(con, "d", ["B", "S"])  # a tie: S is preferred as the modal category
    return con


def test_each_attempt_is_judged_at_its_own_final_step(runs):
    rows = runs.execute("select task_id, attempt, steps, final_status, category from nitr_attempts "
                        "where task_id = 'b' order by attempt").fetchall()
    assert rows == [("b", 0, 3, "ok", "S"), ("b", 1, 3, "ok", "F"),
                    ("b", 2, 3, "ok", "F"), ("b", 3, 3, "build_error", "E")]


def test_nitr_probes_takes_the_last_attempt(runs):
    rows = runs.execute("select task_id, category from nitr_probes order by task_id").fetchall()
    assert rows == [("a", "Pass"), ("b", "E"), ("c", "Pass"), ("d", "S")]


def test_stability(runs):
    rows = runs.execute("select task_id, attempts, n_pass, n_s, n_f, n_e, pass_at_1, modal_category, stability, "
                        "all_agree from nitr_stability order by task_id").fetchall()
    assert rows == [
        ("a", 4, 3, 1, 0, 0, 0.75, "Pass", 0.75, False),
        ("b", 4, 0, 1, 2, 1, 0.0, "F", 0.5, False),
        ("c", 1, 1, 0, 0, 0, 1.0, "Pass", 1.0, True),
        ("d", 2, 0, 1, 0, 0, 0.0, "S", 0.5, False),
    ]


def test_pass_at_k(runs):
    rows = runs.execute("select task_id, attempts, n_pass, pass_at_k, flags from nitr_pass_at_k(k := 2) "
                        "order by task_id").fetchall()
    # a: 1 − C(1,2)/C(4,2) = 1 (fewer failures than k); b: 1 − C(4,2)/C(4,2) = 0; c: n < k
    assert rows == [("a", 4, 3, 1.0, []), ("b", 4, 0, 0.0, []), ("c", 1, 1, None, ["too_few_attempts"]),
                    ("d", 2, 0, 0.0, [])]
    one = dict(runs.execute("select task_id, pass_at_k from nitr_pass_at_k()").fetchall())
    assert one == {"a": 0.75, "b": 0.0, "c": 1.0, "d": 0.0}  # Pass@1 = c / n
    # a with k = 3 of n = 4, c = 3: 1 − C(1,3)/C(4,3) = 1; and a hand case with n = 4, c = 1, k = 2:
    probe(runs, "e", ["Pass", "F", "F", "F"])
    e = runs.execute("select pass_at_k from nitr_pass_at_k(k := 2) where task_id = 'e'").fetchone()[0]
    assert e == pytest.approx(1 - 3 / 6)  # 1 − C(3,2)/C(4,2)
    with pytest.raises(Exception, match="k must be at least 1"):
        runs.execute("select * from nitr_pass_at_k(k := 0)").fetchall()


def test_a_probe_the_preflight_refused_is_unscored_with_its_reason(con):
    """environment_error (the sandbox cannot build the probe): no category, flagged, and counted as unscored."""
    add_run(con, "r", "nitr")
    probe(con, "a", ["Pass"])
    add_task(con, "r", "toolless", "nitr", dimension="D2", granularity="micro", status="environment_error")
    add_targets(con, "r", "toolless", "functional", ["toolless::f"])
    add_targets(con, "r", "toolless", "structural", ["toolless::s"])
    assert con.execute("select task_id, category, evaluated from nitr_probes order by task_id").fetchall() == [
        ("a", "Pass", True), ("toolless", None, False)]
    assert con.execute("select scored, reason from task_scored where task_id = 'toolless'").fetchall() == [
        (False, "environment_error")]
    assert con.execute("select complete, unscored_reasons from run_completeness").fetchall() == [
        (False, {"environment_error": 1})]
