"""What a run's artifacts and ``evoci report --html`` show: the views' numbers, plots inline."""

from __future__ import annotations

import re

import pytest

from evoci.artifacts import artifact_key
from evoci.cli import main
from evoci.runtime import RunContext
from evoci.domain import RunConfig
from evoci.store import connect
from evoci.swe_ci.digest import load_digest
from evoci.swe_ci.plots import a_per_iteration, run_plots
from evoci.swe_ci.report import publish_run, run_markdown, task_markdown
from tests.sql.swe_ci_rows import add_run, add_task

PNG = "data:image/png;base64,iVBORw0KGgo"  # the PNG signature, base64


@pytest.fixture
def db(tmp_path):
    """Two runs of one dataset: r1 gains 1 of 3 target tests per iteration, r2 fixes all at once
    then breaks one (a regression); N = 3."""
    path = tmp_path / "evoci.duckdb"
    with connect(path) as con:
        for run in ("r1", "r2"):
            add_run(con, run, max_iterations=3)
        add_task(con, "r1", "calc", targets="abcd", passed=["a", "ab", "abc", "abcd"])
        add_task(con, "r2", "calc", targets="abcd", passed=["a", "abcd", "abc", "abcd"])
        # a run of another dataset: never compared with these
        con.execute("insert into runs (run_id, protocol, dataset, max_iterations, config_hash, config, created_at) values ('other', 'swe-ci', 'other', 3, 'h', '{}', now())")
        add_task(con, "other", "calc", targets="ab", passed=["a", "ab"])
    return path


def view(db, sql: str, params=None):
    with connect(db, read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def test_the_run_summary_shows_the_views_scores_tables_and_inline_plots(db):
    digest = load_digest(db, "r1")
    markdown = run_markdown(digest, run_plots(digest))

    [(evoscore,)] = view(db, "select evoscore from evoscore_runs(gamma := 1.0) where run_id = 'r1'")
    assert evoscore == pytest.approx((1 / 3 + 2 / 3 + 1) / 3)  # a = 1/3, 2/3, 1 over N = 3
    assert f"EvoScore **{evoscore:.3f}** (γ = 1)" in markdown
    assert "solved 1 (100 %)" in markdown and "zero-regression rate 100 %" in markdown and "cost $0.0000" in markdown
    # the task table: one row per task, from the views
    assert re.search(r"\| calc \| done \| 1 → 4 \| 3 \| yes \| 0\.667 \| yes \| 0 \| 0\.0000 \|", markdown)
    # a(c) per iteration, and the γ ranking of the two runs of the dataset, as inline PNGs
    assert markdown.count(f"]({PNG}") == 2
    assert "## EvoScore ranking across γ (2 runs of dataset `test`)" in markdown
    assert digest.compared_runs == ["r1", "r2"]  # not the run of the other dataset
    [(evoscore_r2,)] = view(db, "select evoscore from evoscore_runs(gamma := 1.0) where run_id = 'r2'")
    assert evoscore_r2 == pytest.approx((1 + 2 / 3 + 1) / 3)  # so r2 ranks first at γ = 1
    # r2 is ahead of r1 at every iteration, so at every γ: r1 is #2 in all six columns
    [r1_row] = [line for line in markdown.splitlines() if line.startswith("| r1 ← this run |")]
    assert r1_row.count("#2 (") == 6 and f"#2 ({evoscore:.3f})" in r1_row
    [r2_row] = [line for line in markdown.splitlines() if line.startswith("| r2 |")]
    assert r2_row.count("#1 (") == 6 and f"#1 ({evoscore_r2:.3f})" in r2_row


def test_the_task_summary_lists_every_iteration_and_its_regressions(db):
    digest = load_digest(db, "r2", task_id="calc")
    [task] = digest.tasks
    markdown = task_markdown(digest, task, a_per_iteration([task], 3, title="a"))
    assert "1 regressed test" in markdown and "solved at iteration 3" in markdown
    assert "| 2 | ok | 3/4 | 0.667 | 1 | 0 |" in markdown  # d broke at iteration 2
    assert PNG in markdown


def test_a_run_with_no_other_run_of_its_dataset_has_no_ranking(tmp_path):
    path = tmp_path / "one.duckdb"
    with connect(path) as con:
        add_run(con, "solo", max_iterations=3)
        add_task(con, "solo", "calc", targets="ab", passed=["a", "ab"])
    digest = load_digest(path, "solo")
    assert set(run_plots(digest)) == {"a"} and "ranking across γ" not in run_markdown(digest, run_plots(digest))


def test_artifact_keys_are_what_prefect_accepts():
    assert artifact_key("demo-7abd945e5e-CFA01761", "Task_1.x", "summary") == "evoci-demo-7abd945e5e-cfa01761-task-1-x-summary"


def test_creating_artifacts_never_fails_a_run(tmp_path, caplog):
    run = RunContext.create(RunConfig(run_id="gone"), "demo", home=str(tmp_path), db=str(tmp_path / "missing.duckdb"))
    publish_run(run)  # no database, no Prefect run: a warning, nothing raised
    assert "could not create the run's artifacts" in caplog.text


def test_report_html_is_one_self_contained_file(db, tmp_path, capsys):
    out = tmp_path / "report" / "r1.html"
    assert main(["report", "--db", str(db), "--run-id", "r1", "--html", str(out)]) == 0
    html = out.read_text()
    assert '<img src="data:image/png;base64,' in html
    assert html.count("<img ") == 2  # a(c) per iteration, the γ ranking (one task: no second a(c) plot)
    assert not re.search(r"(src|href)=\"(?!data:)", html) and "http://" not in html and "https://" not in html
    assert "<script" not in html and "<link" not in html
    [(evoscore,)] = view(db, "select evoscore from evoscore_runs(gamma := 1.0) where run_id = 'r1'")
    assert f"<strong>{evoscore:.3f}</strong>" in html
    assert "<td>calc</td><td>done</td>" in html
