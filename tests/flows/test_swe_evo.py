"""SWE-EVO end to end on the built-in demo, through the real ``swe_evo`` flow and the views."""

from __future__ import annotations

import json
import math

import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.swe_evo import swe_evo
from evoci.workspace import Workspace
from tests.flows.helpers import query

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]
Z = 1.96


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval, written out by hand."""
    p = k / n
    centre = p + Z * Z / (2 * n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (centre - half) / (1 + Z * Z / n), (centre + half) / (1 + Z * Z / n)


RUN_COLUMNS = ("instances, valid_instances, missing_predictions, predictions, resolved_instances, resolved_rate, "
               "resolved_rate_low, resolved_rate_high, patches_applied, patch_apply_rate, patch_apply_rate_low, "
               "patch_apply_rate_high, fix_rate")


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("swe-evo-home")  # shared: the demo's environment is built once


def run(home, agent: AgentConfig, sandbox: str = "local", run_id: str | None = None):
    config = RunConfig(protocol="swe-evo", programmer=agent, sandbox=SandboxConfig(kind=sandbox), run_id=run_id,
                       test_timeout_s=300)
    summaries = swe_evo("swe-evo-demo", config, home=str(home))
    return summaries[0].run_id


def runs_row(home, run_id):
    [row] = query(home / "evoci.duckdb", f"select {RUN_COLUMNS} from swe_evo_runs where run_id = ?", [run_id])
    return row


def approx(row):
    return tuple(pytest.approx(v, abs=1e-9) if isinstance(v, float) else v for v in row)


def test_gold_resolves_every_instance_and_empty_resolves_none(home):
    gold = run(home, AgentConfig(kind="gold"))
    low, high = wilson(3, 3)
    # 3 valid instances, 3 gold patches applied and resolved: 3/3, Fix Rate 1.
    assert runs_row(home, gold) == approx((3, 3, 0, 3, 3, 1.0, low, high, 3, 1.0, low, high, 1.0))
    rows = query(home / "evoci.duckdb", "select task_id, resolved, fix_rate, flags from swe_evo_instances "
                 "where run_id = ? order by task_id", [gold])
    assert rows == [("kvconf_0.1.0_0.2.0", True, 1.0, []), ("kvconf_0.2.0_0.3.0", True, 1.0, []),
                    ("kvconf_0.3.0_0.3.1", True, 1.0, [])]
    # The -rA parser truncates `test_integers[n = 3-3]` and `[n = -12--12]` to one id: recorded.
    collisions = query(home / "evoci.duckdb", "select task_id, collisions from gradings where run_id = ? "
                       "order by task_id", [gold])
    assert [(t, json.loads(c)) for t, c in collisions] == [
        ("kvconf_0.1.0_0.2.0", {"tests/test_values.py::test_integers[n": 2}), ("kvconf_0.2.0_0.3.0", {}),
        ("kvconf_0.3.0_0.3.1", {"tests/test_values.py::test_integers[n": 2})]

    # The flow run's page shows the same table and rates.
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from evoci.artifacts import artifact_key

    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(artifact_filter=ArtifactFilter(
            key=ArtifactFilterKey(any_=[artifact_key("swe-evo", gold)])), limit=1)
    assert "resolved 3/3 = 100.0 % [43.8 %, 100.0 %]" in artifact.data and "kvconf_0.2.0_0.3.0" in artifact.data

    empty = run(home, AgentConfig(kind="empty"))
    low, high = wilson(0, 3)
    # An empty patch is no prediction: 0/3 resolved, 0/3 applied, every instance kept.
    assert runs_row(home, empty) == approx((3, 3, 3, 0, 0, 0.0, low, high, 0, 0.0, low, high, 0.0))
    assert low == 0.0 and high == pytest.approx(Z * Z / (3 + Z * Z))


def test_replay_of_the_real_history_resolves_like_gold(home):
    replay = run(home, AgentConfig(kind="replay"))
    assert runs_row(home, replay)[4] == 3


def _without_file(patch: str, path: str) -> str:
    parts = patch.split("diff --git ")
    return "".join("diff --git " + p for p in parts[1:] if not p.startswith(f"a/{path} "))


def test_both_prediction_formats_grade_to_the_same_rows_and_keep_missing_ones(home, tmp_path):
    from evoci.swe_evo.demo import build_swe_evo_demo

    records = {r["instance_id"]: r for r in json.loads(build_swe_evo_demo(home / "swe-evo-demo").read_text())}
    patches = {
        "kvconf_0.1.0_0.2.0": records["kvconf_0.1.0_0.2.0"]["patch"],  # gold: resolved
        # without the sample file's new section: F2P 2 of 3 (P2P empty) → fix 2/3, unresolved
        "kvconf_0.2.0_0.3.0": _without_file(records["kvconf_0.2.0_0.3.0"]["patch"], "tests/data/sample.conf"),
        # kvconf_0.3.0_0.3.1: no prediction at all
    }
    openhands = tmp_path / "output.jsonl"
    openhands.write_text("".join(json.dumps({"instance_id": i, "test_result": {"git_patch": p}}) + "\n"
                                 for i, p in patches.items()))
    swe_agent = tmp_path / "preds.json"
    swe_agent.write_text(json.dumps({i: {"model_name_or_path": "m", "model_patch": p} for i, p in patches.items()}))
    run_ids = [run(home, AgentConfig(kind="predictions", options={"path": str(f)}))
               for f in (openhands, swe_agent)]
    sql = ("select task_id, has_prediction, patch_applied, resolved, fix_rate, flags from swe_evo_instances "
           "where run_id = ? order by task_id")
    first, second = (query(home / "evoci.duckdb", sql, [r]) for r in run_ids)
    assert first == second == [
        ("kvconf_0.1.0_0.2.0", True, True, True, 1.0, []),
        ("kvconf_0.2.0_0.3.0", True, True, False, pytest.approx(2 / 3), []),
        ("kvconf_0.3.0_0.3.1", False, None, False, 0.0, ["missing_prediction"]),
    ]
    r_low, r_high = wilson(1, 3)
    a_low, a_high = wilson(2, 3)
    # resolved 1/3; applied 2/3 (the missing one counts as not applied); fix (1 + 2/3 + 0) / 3 = 5/9
    for run_id in run_ids:
        assert runs_row(home, run_id) == approx((3, 3, 1, 2, 1, 1 / 3, r_low, r_high, 2, 2 / 3, a_low, a_high, 5 / 9))


def test_re_running_the_same_command_resumes_from_stored_nodes_without_duplicate_facts(home):
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
    from prefect.client.schemas.sorting import FlowRunSort

    first = run(home, AgentConfig(kind="gold"), run_id="resume")
    second = run(home, AgentConfig(kind="gold"), run_id="resume")
    assert first == second
    with get_client(sync_client=True) as client:
        [*_, latest] = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=["swe-evo-swe-evo-demo"])),
                                             sort=FlowRunSort.EXPECTED_START_TIME_ASC)
        states = [t.state.name for t in client.read_task_runs(
            flow_run_filter=FlowRunFilter(id={"any_": [latest.id]})) if t.name != "claim-run"]
    assert len(states) == 12 and set(states) == {"Cached"}  # 3 instances × prepare, validate, agent, test: read back
    assert query(home / "evoci.duckdb", "select count(*) from iterations where run_id = 'resume'") == [(3,)]
    assert query(home / "evoci.duckdb", "select dataset_tasks, tasks_expected, tasks_unscored, complete from runs "
                 "join run_completeness using (run_id) where run_id = 'resume'") == [(3, 3, 0, True)]


def test_a_run_id_reused_with_another_agent_or_dataset_is_refused_and_its_results_stay(home, tmp_path):
    from evoci.errors import DriftError
    from evoci.swe_evo.demo import build_swe_evo_demo

    run(home, AgentConfig(kind="gold"), run_id="claimed")
    db = home / "evoci.duckdb"
    before = query(db, "select task_id, iteration, status from iterations where run_id = 'claimed' order by task_id")
    with pytest.raises(DriftError, match=r"run claimed already holds results made with a different config.*programmer"):
        run(home, AgentConfig(kind="empty"), run_id="claimed")
    records = build_swe_evo_demo(tmp_path / "demo")
    edited = json.loads(records.read_text())
    edited[0]["problem_statement"] += "\nOne more line of release notes."  # another dataset: another identity
    records.write_text(json.dumps(edited))
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="gold"), run_id="claimed", test_timeout_s=300)
    with pytest.raises(DriftError, match=r"dataset: swe-evo-demo-(\w+) → swe-evo-demo-(?!\1)\w+"):
        swe_evo(str(records), config, home=str(home))
    assert query(db, "select task_id, iteration, status from iterations where run_id = 'claimed' order by task_id") == before
    assert query(db, "select resolved_instances from swe_evo_runs where run_id = 'claimed'") == [(3,)]


def test_an_infrastructure_failure_of_a_test_node_is_retried_and_never_scored(home, monkeypatch):
    monkeypatch.setenv("EVOCI_INJECT_FAULTS", "test@1x1")  # the first test node to run fails once
    config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind="gold"), run_id="retried",
                       retry_delays_s=[0.0], test_timeout_s=300)
    swe_evo("swe-evo-demo", config, home=str(home))
    db = home / "evoci.duckdb"
    assert query(db, "select resolved_instances, valid_instances from swe_evo_runs where run_id = 'retried'") == [(3, 3)]
    assert query(db, "select count(*) from iterations where run_id = 'retried'") == [(3,)]
    assert (home / "faults" / "test@1").read_text() == "1"  # the fault did happen, and the retry absorbed it


def test_evoci_run_grades_public_format_records_from_local_clones(home, tmp_path, capsys):
    from evoci.cli import main
    from evoci.swe_evo.demo import build_swe_evo_demo

    dataset = build_swe_evo_demo(home / "swe-evo-demo")
    records = json.loads(dataset.read_text())
    for record in records:
        del record["repo_path"]  # as the public data has them: the repository comes from --repos
    no_f2p = {**records[2], "instance_id": "kvconf-no-f2p", "FAIL_TO_PASS": []}
    bad = {**records[0], "instance_id": "kvconf-bad-parser", "log_parser": "parse_log_unknown"}
    folder = tmp_path / "records"
    folder.mkdir()
    for record in [*records, no_f2p, bad]:
        (folder / f"{record['instance_id']}.json").write_text(json.dumps(record))
    repos = tmp_path / "repos"
    repos.mkdir()
    (repos / "evoci__kvconf").symlink_to(dataset.parent / "kvconf")
    db = tmp_path / "results.duckdb"
    # Exit 1: a record did not load and an instance is invalid — the run is not the whole dataset's.
    assert main(["run", str(folder), "--repos", str(repos), "--agent", "gold", "--home", str(home), "--db", str(db)]) == 1
    printed = capsys.readouterr().out
    assert "not scored: task kvconf-no-f2p — invalid" in printed and "exit 1: 2 task(s) without a score" in printed
    # 5 records: 4 loaded, one of them invalid (empty F2P: out of the rates' denominators); the bad record is
    # listed as skipped and counted in the headline's denominator
    assert "resolved 3 of 5 record(s); 1 not loaded, 1 invalid · 3 valid instance(s) (0 without prediction" in printed
    assert "resolved 3/3" in printed and "dataset: 5 record(s), 4 loaded, 1 not loaded (listed above)" in printed
    skipped = [line for line in printed.splitlines() if line.startswith("skipped: ")]
    assert len(skipped) == 1 and "unknown log_parser 'parse_log_unknown'" in skipped[0]
    assert query(db, "select instances, valid_instances, invalid_instances, resolved_instances from swe_evo_runs") == [
        (4, 3, 1, 3)]
    [(message,)] = query(db, "select message from failures where node = 'dataset'")
    assert "unknown log_parser 'parse_log_unknown'" in message


def test_an_agent_node_retried_after_it_committed_starts_again_from_the_whole_base(home, monkeypatch):
    # The first agent node fails once after its agent ran and committed. Its retry must not find the
    # old git folder and skip building the work tree.
    monkeypatch.setenv("EVOCI_INJECT_FAULTS", "programmer-paid@1x1")
    agent = AgentConfig(kind="command", options={
        "command": ["python", "-c", "open('AGENT_NOTES.txt', 'w').write('read the notes\\n')"], "timeout_s": 60})
    config = RunConfig(protocol="swe-evo", programmer=agent, run_id="agent-retried", retry_delays_s=[0.0],
                       test_timeout_s=300)
    swe_evo("swe-evo-demo", config, home=str(home / "agent-retried"))
    db = home / "agent-retried" / "evoci.duckdb"
    assert (home / "agent-retried" / "faults" / "programmer-paid@1").read_text() == "1"  # the fault did happen
    assert query(db, "select status, count(*) from tasks group by status") == [("done", 3)]
    assert query(db, "select count(*) from swe_evo_instances where patch_applied and not resolved") == [(3,)]
    # Each prediction adds the one file to the whole base (before, the retry's agent ran in an empty
    # tree and its prediction deleted the whole codebase).
    git_dirs = list((home / "agent-retried" / "runs" / "agent-retried").glob("*/git"))
    assert len(git_dirs) == 3
    for git_dir in git_dirs:
        changed = Workspace(git_dir.parent / "workspace").repo.git.diff("--name-only", "iteration-0", "HEAD")
        assert changed.split() == ["AGENT_NOTES.txt"]
