"""The evolve flow on a small real repository, with the real Prefect engine and DuckDB."""

from __future__ import annotations

import pytest

from evoci.workspace import Workspace
from evoci.domain import RunConfig, TaskSpec
from evoci.flows.evolve import evolve
from tests.flows.helpers import node_states, query
from tests.repos import calc_repo

pytestmark = pytest.mark.usefixtures("prefect_server")


def calc_task(tmp_path, task_id: str) -> TaskSpec:
    return TaskSpec(task_id=task_id, repo=str(calc_repo(tmp_path / "calc")), base_ref="base", oracle_ref="oracle")


def test_replay_agent_solves_calc_with_the_hand_computed_scores(tmp_path):
    home, config = tmp_path / "home", RunConfig(max_iterations=5)
    summary = evolve(calc_task(tmp_path, "calc"), config, home=str(home))
    db = home / "evoci.duckdb"
    assert (summary.status, summary.iterations, summary.passed, summary.targets) == ("done", 3, 5, 5)
    # n(c0) = 2, n(c*) = 5: a = (n − 2) / 3. Iteration 2 swaps tests: add_negative breaks, mul is fixed.
    rows = query(db, "select iteration, n_passed, round(a, 4), regressions, fixes from swe_ci_iterations order by iteration")
    assert rows == [(0, 2, 0.0, None, None), (1, 3, 0.3333, 0, 1), (2, 3, 0.3333, 1, 1), (3, 5, 1.0, 0, 2)]
    # Solved at 3, padded to N = 5: (1/3 + 1/3 + 1 + 1 + 1) / 5.
    [(evoscore, solved)] = query(db, "select evoscore, solved from evoscore(gamma := 1.0)")
    assert solved and evoscore == pytest.approx((1 / 3 + 1 / 3 + 3) / 5)
    [(zero_regression,)] = query(db, "select zero_regression from swe_ci_zero_regression")
    assert zero_regression is False
    # The workspace holds one commit per iteration, and never the oracle's code.
    workspace = home / "runs" / summary.run_id / "calc" / "workspace"
    log = Workspace(workspace).repo.git.log("--format=%s").splitlines()
    assert [line.split(" (")[0] for line in log] == [
        "evoci: iteration 3", "evoci: iteration 2", "evoci: iteration 1",
        "evoci: iteration 0 — base codebase with the oracle's tests"]


def first_run_id(db) -> str:
    [(run_id,)] = query(db, "select run_id from runs")
    return run_id


def test_a_test_node_that_failed_permanently_is_the_only_node_re_executed(tmp_path, monkeypatch):
    home = tmp_path / "home"
    config = RunConfig(max_iterations=5, node_retries=2, retry_delays_s=[0.1])
    task = calc_task(tmp_path, "calc-retry")
    monkeypatch.setenv("EVOCI_INJECT_FAULTS", "test@2x3")  # 1 try + 2 retries: all fail

    first = evolve(task, config, home=str(home), return_state=True)
    assert first.is_failed()
    db = home / "evoci.duckdb"
    assert query(db, "select status from tasks") == [("infra_error",)]
    assert query(db, "select max(iteration) from iterations") == [(1,)]  # nothing recorded for the failed iteration
    [(evoscore, reason)] = query(db, "select evoscore, reason from evoscore(gamma := 1.0)")
    assert evoscore is None and reason  # never scored as a regression
    assert query(db, "select node, kind from failures") == [("flow", "infrastructure")]

    # As a process killed while git held them would leave them: the next run must not stop on them.
    git_dir = home / "runs" / first_run_id(db) / "calc-retry" / "git"
    (git_dir / "index.lock").write_text("")
    (git_dir / "HEAD.lock").write_text("")
    second = evolve(task, config, home=str(home), return_state=True)
    assert second.is_completed()
    assert not list(git_dir.rglob("*.lock"))
    states = node_states(second.state_details.flow_run_id)
    cached = {name for name, state in states.items() if state == "Cached"}
    # The claims (run config, task identity) check the recorded facts on every run: never cached.
    executed = {name for name, state in states.items() if state == "Completed" and not name.startswith("claim-")}
    assert cached == {"prepare", "test-oracle", "test-0", "architect-1", "programmer-1", "test-1", "architect-2",
                      "programmer-2"}
    assert executed == {"test-2", "architect-3", "programmer-3", "test-3"}
    assert query(db, "select status from tasks") == [("done",)]
    assert query(db, "select round(evoscore, 4) from evoscore(gamma := 1.0)") == [(round((2 / 3 + 3) / 5, 4),)]
    assert query(db, "select count(*), count(distinct (iteration, test_id)) from test_results") == [(20, 20)]
