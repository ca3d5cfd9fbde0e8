"""SWE-Bench-CL end to end on the built-in demo sequence, through the real ``continual`` flow and the views."""

from __future__ import annotations

import json
import statistics

import pytest
from prefect import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

from evoci.artifacts import artifact_key
from evoci.domain import AgentConfig, RunConfig
from evoci.swe_bench_cl.embedding import EmbeddingConfig
from evoci.swe_bench_cl.memory import MemoryConfig
from evoci.flows.continual import continual
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]
N = 6
# The cells (memory stage i, issue j) where the scripted agent plays the gold patch; no change elsewhere.
RESOLVE = {(0, 1), (0, 3), (0, 4),                               # memory off
           (2, 3), (4, 5), (5, 6),                               # in sequence (not (1,2), (3,4))
           (1, 1), (2, 2), (3, 3), (4, 4), (6, 6),               # diagonal (not (5,5))
           (2, 1), (3, 1), (5, 1), (4, 3), (5, 2), (6, 3), (6, 5)}  # other re-tests


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("cl-home")  # shared: the demo's environment is built once


def run(home, agent: AgentConfig, **options) -> str:
    config = RunConfig(protocol="swe-bench-cl", programmer=agent, test_timeout_s=300)
    [summary] = continual("swe-bench-cl-demo", config, home=str(home),
                          embedding=EmbeddingConfig(kind="hashing"), **options)
    assert summary.status == "done"
    return summary.run_id


def recorded_matrix(db, run_id) -> dict[tuple[int, int], float]:
    """a(i, j) by hand from the facts: an attempt resolves when every F2P and P2P target passed."""
    rows = query(db, """
        select t.sequence_position, i.iteration, i.attempt,
               count(*) filter (where r.outcome = 'passed') = count(*) as resolved
        from iterations i
        join tasks t using (run_id, task_id)
        join targets g on g.run_id = i.run_id and g.task_id = i.task_id
        left join test_results r on r.run_id = i.run_id and r.task_id = i.task_id and r.iteration = i.iteration
             and r.attempt = i.attempt and r.test_id = g.test_id
        where i.run_id = ?
        group by all""", [run_id])
    cells: dict[tuple[int, int], list[bool]] = {}
    for j, i, _, resolved in rows:
        cells.setdefault((i, j), []).append(resolved)
    return {cell: sum(v) / len(v) for cell, v in cells.items()}


def hand_metrics(a: dict[tuple[int, int], float], walls: list[tuple[float, bool]]) -> dict[str, float]:
    mean = statistics.fmean
    acc = mean(a[N, j] for j in range(1, N + 1))
    f = mean(max(a[k, j] for k in range(j, N)) - a[N, j] for j in range(1, N))
    ft = mean(a[i, i + 1] - a[0, i + 1] for i in range(1, N))
    bwt = mean(a[N, i] - a[i, i] for i in range(1, N))
    aulc = sum(mean(a[k, k] for k in range(1, i + 1)) for i in range(1, N + 1)) / N
    p, s = mean(a[i, i] for i in range(1, N + 1)), 1 - f
    f1 = 2 * p * s / (p + s)
    tue = statistics.median(w for w, ok in walls if ok) / statistics.median(w for w, _ in walls)
    return {"acc": acc, "forgetting": f, "ft": ft, "bwt": bwt, "aulc": aulc, "tue": tue, "cl_p": p, "cl_s": s,
            "cl_f1": f1, "cl_fbeta": f1, "cl_score": acc - f + ft + bwt + aulc + f1}


def test_full_matrix_with_memory_fills_every_cell_and_the_metrics_match_a_hand_computation(home):
    run_id = run(home, AgentConfig(kind="scripted", options={"resolve": [f"{i},{j}" for i, j in sorted(RESOLVE)]}),
                 matrix="full", memory=MemoryConfig(top_k=2))
    db = home / "evoci.duckdb"
    cells = query(db, "select memory_stage, sequence_position, cell, a from cl_matrix where run_id = ?", [run_id])
    assert len(cells) == (N + 1) * N
    filled = {(i, j): a for i, j, cell, a in cells if cell != "ahead"}
    assert None not in filled.values() and len(filled) == N + (N - 1) + N * (N + 1) // 2
    assert all(a is None for *_, cell, a in cells if cell == "ahead")
    # graded for real: the scripted cells resolve, the others do not
    a = recorded_matrix(db, run_id)
    assert a == {cell: float(cell in RESOLVE) for cell in filled}

    walls = [(w, ok) for w, ok in query(db, "select wall_s, resolved from cl_attempts where run_id = ?", [run_id])]
    columns = "acc, forgetting, ft, bwt, aulc, tue, cl_p, cl_s, cl_f1, cl_fbeta, cl_score, cells_missing"
    [row] = query(db, f"select {columns} from cl_metrics_default where run_id = ?", [run_id])
    expected = hand_metrics(a, walls)
    assert dict(zip(columns.split(", "), row)) == {**{k: pytest.approx(v, abs=1e-9) for k, v in expected.items()},
                                                   "cells_missing": 0}

    # memory: one experience per issue, from its in-sequence attempt — never from a re-test
    experiences = query(db, "select stage, task_id, outcome from cl_experiences where run_id = ? order by stage", [run_id])
    source = {1: (0, 1), **{j: (j - 1, j) for j in range(2, N + 1)}}
    assert experiences == [(j, f"evoci__strkit-{j}", "resolved" if source[j] in RESOLVE else "unresolved")
                           for j in range(1, N + 1)]
    # retrieval reads only M(i): nothing at stage 0, nothing stored after stage i
    retrievals = query(db, """select r.iteration, e.stage, r.task_id, r.experience_task from cl_retrievals r
                              join cl_experiences e on e.run_id = r.run_id and e.task_id = r.experience_task
                              where r.run_id = ?""", [run_id])
    assert retrievals and all(i >= 1 and stage <= i for i, stage, *_ in retrievals)
    # issue 5 (slugify's separator), processed with M(4), recalls the two slugify issues, not the truncate ones
    recalled = {e for i, _, t, e in retrievals if (i, t) == (4, "evoci__strkit-5")}
    assert recalled == {"evoci__strkit-1", "evoci__strkit-2"}


def test_memory_off_core_matrix_attempts_4n_minus_2_cells_and_stores_nothing(home):
    run_id = run(home, AgentConfig(kind="gold"), matrix="core", memory=MemoryConfig(enabled=False))
    db = home / "evoci.duckdb"
    [(attempts, resolved)] = query(db, "select count(*), count(*) filter (where resolved) from cl_attempts "
                                       "where run_id = ?", [run_id])
    assert (attempts, resolved) == (4 * N - 2, 4 * N - 2)
    [(acc, ft, bwt, cl_p, missing)] = query(db, "select acc, ft, bwt, cl_p, cells_missing from cl_metrics_default "
                                                "where run_id = ?", [run_id])
    # core leaves the off-diagonal re-tests of rows 1..N-1 unevaluated (NULL, never 0)
    assert (acc, ft, bwt, cl_p, missing) == (1.0, 0.0, 0.0, 1.0, N * (N + 1) // 2 - N - (N - 1))
    assert query(db, "select count(*) from cl_experiences where run_id = ?", [run_id]) == [(0,)]
    assert query(db, "select count(*) from cl_retrievals where run_id = ?", [run_id]) == [(0,)]
    # the run knows its sequence held N issues, so a run stopped early would say it is partial
    assert query(db, "select dataset_tasks, tasks_expected, tasks_unscored, complete from runs "
                     "join run_completeness using (run_id) where run_id = ?", [run_id]) == [(N, N, 0, True)]
    # the flow run's page shows the matrix and the metrics
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=[artifact_key("swe-bench-cl", run_id)])))
    assert "| 6 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 | 1.00 |" in artifact.data
    assert "| 2 | · | 1.00 | 1.00 | · | · | · |" in artifact.data


def test_issues_with_a_missing_base_or_a_broken_test_patch_are_named_and_the_sequence_goes_on(home, tmp_path):
    from evoci.swe_bench_cl.demo import build_cl_demo

    curriculum = json.loads(build_cl_demo(home / "swe-bench-cl-demo").read_text())
    curriculum["sequences"][0]["tasks"][2]["metadata"]["base_commit"] = "v9.9-missing"
    test_patch = curriculum["sequences"][0]["tasks"][4]["evaluation"]["test_patch"]
    curriculum["sequences"][0]["tasks"][4]["evaluation"]["test_patch"] = test_patch.replace("def test_", "def tset_")
    curriculum["sequences"][0]["repo_path"] = str(home / "swe-bench-cl-demo" / "strkit")
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(curriculum))
    config = RunConfig(protocol="swe-bench-cl", programmer=AgentConfig(kind="gold"), test_timeout_s=300)
    [summary] = continual(str(path), config, matrix="core", home=str(home), embedding=EmbeddingConfig(kind="hashing"))
    db = home / "evoci.duckdb"
    [(status, reason)] = query(db, "select status, reason from tasks where run_id = ? and sequence_position = 3",
                               [summary.run_id])
    assert status == "input_error" and "v9.9-missing" in reason
    [(status,)] = query(db, "select status from tasks where run_id = ? and sequence_position = 5", [summary.run_id])
    assert status == "input_error"
    cells = query(db, "select sequence_position, count(a) from cl_matrix where run_id = ? group by all order by all",
                  [summary.run_id])
    assert dict(cells)[3] == dict(cells)[5] == 0  # never scored, never 0
    assert all(n > 0 for j, n in cells if j not in (3, 5))
    # issue 3 was never attempted (not a(0,3), a(2,3), a(3,3), a(6,3)); issue 5 stopped at its first grading
    assert query(db, "select count(*) from cl_attempts where run_id = ? and sequence_position = 3", [summary.run_id]) == [(0,)]
