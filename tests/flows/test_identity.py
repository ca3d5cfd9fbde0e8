"""Identity is content: a changed dataset line, a moved ref or a changed config never merges into old results."""

from __future__ import annotations

import shutil

import git
import pytest

from evoci.cli import main
from evoci.domain import RunConfig, TaskSpec
from evoci.errors import DriftError
from evoci.flows.benchmark import benchmark
from evoci.flows.evolve import evolve
from tests.flows.helpers import query
from tests.repos import calc_repo, write_dataset

pytestmark = pytest.mark.usefixtures("prefect_server")

LINE = {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}
RECORD = ("select iteration, status, codebase_sha, (select list(outcome order by test_id) from test_results r "
          "where r.run_id = i.run_id and r.task_id = i.task_id and r.iteration = i.iteration) "
          "from iterations i order by iteration")
TASK = "select run_id, base_ref, base_sha, oracle_sha, status from tasks"


def test_a_dataset_line_edited_in_place_is_refused_naming_the_change_and_the_old_results_stay(tmp_path):
    repo = calc_repo(tmp_path / "calc")
    git.Repo(repo).create_tag("with-sub", ref="oracle~2")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [LINE])
    home, config = tmp_path / "home", RunConfig(max_iterations=1)
    db = home / "evoci.duckdb"
    [first] = benchmark(str(dataset), config, home=str(home))
    assert first.status == "done"
    iterations, task = query(db, RECORD), query(db, TASK)

    write_dataset(dataset, [{**LINE, "base_ref": "with-sub"}])
    [second] = benchmark(str(dataset), config, home=str(home))

    assert second.status == "input_error"
    assert 'base_ref: "base" → "with-sub"' in second.reason and "--run-id" in second.reason
    assert query(db, RECORD) == iterations  # nothing of the new base merged into the old results
    assert query(db, TASK) == task  # the old ref, its SHA and its status, unmixed
    assert query(db, "select node, kind from failures where task_id = 'calc'") == [("identity", "input")]


def test_a_branch_moved_under_a_deleted_task_folder_is_refused_naming_the_commit(tmp_path):
    repo = git.Repo(calc_repo(tmp_path / "calc"))
    repo.create_head("start", "base")
    task = TaskSpec(task_id="calc", repo=repo.working_dir, base_ref="start", oracle_ref="oracle")
    home, config = tmp_path / "home", RunConfig(max_iterations=1)
    db = home / "evoci.duckdb"
    assert evolve(task, config, home=str(home)).status == "done"
    iterations = query(db, RECORD)
    [(run_id, _, base_sha, _, _)] = query(db, TASK)

    repo.heads.start.commit = repo.commit("oracle~2")  # same dataset line, another commit
    shutil.rmtree(home / "runs" / run_id / "calc")  # the cached prepare result goes with the folder
    summary = evolve(task, config, home=str(home))

    assert summary.status == "input_error"
    assert f"base_sha: {base_sha} → {repo.commit('oracle~2').hexsha}" in summary.reason
    assert query(db, RECORD) == iterations
    assert query(db, "select base_sha, status from tasks") == [(base_sha, "done")]


def test_a_run_id_reused_with_another_config_is_refused_naming_the_keys(tmp_path, capsys):
    calc_repo(tmp_path / "calc")
    dataset = write_dataset(tmp_path / "tasks.jsonl", [LINE])
    home = tmp_path / "home"
    db = home / "evoci.duckdb"
    benchmark(str(dataset), RunConfig(run_id="mine", max_iterations=1), home=str(home))

    # The command line refuses before anything runs ...
    code = main(["run", str(dataset), "--run-id", "mine", "--max-iterations", "2", "--test-timeout", "600",
                 "--home", str(home)])
    error = capsys.readouterr().err
    assert code == 2
    assert "max_iterations: 1 → 2" in error and "test_timeout_s: 3600.0 → 600.0" in error and "--run-id" in error
    # ... and so does the flow itself (a deployment run has no command line).
    with pytest.raises(DriftError, match="max_iterations: 1 → 2"):
        benchmark(str(dataset), RunConfig(run_id="mine", max_iterations=2), home=str(home))
    assert query(db, "select run_id, max_iterations from runs") == [("mine", 1)]
    assert query(db, "select max(iteration) from iterations") == [(1,)]
    # Settings that never shape results (concurrency, retries) are not drift.
    assert benchmark(str(dataset), RunConfig(run_id="mine", max_iterations=1, concurrency=1, node_retries=0),
                     home=str(home))[0].status == "done"
