"""Operating evoci from the Prefect UI, end to end, against a real local server.

One ``prefect server start`` (SQLite, its own PREFECT_HOME) serves the whole module; two
``evoci serve`` processes register deployments with it: one with an injected test-node
fault (the retry story) and one on a one-minute cron (the schedule story, started first so
its minute tick overlaps the retry story). Processes are stopped serve-first, then the server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from evoci.cli_ops import server_env
from evoci.deployments.retry import retry_flow_run
from evoci.domain import RunConfig
from tests.flows.helpers import node_states, query
from tests.deployments.serving import free_port, serve, stop, wait_for
from tests.repos import calc_repo, write_dataset

pytestmark = [pytest.mark.prefect_server, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
E2E = "e2e"  # deployments benchmark/e2e and evolve/e2e
EVERY_MINUTE = "every-minute"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """A local Prefect server with its own SQLite database; yields its API URL."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = free_port()
    env = server_env("127.0.0.1", port, str(home))
    env["PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS"] = "5"  # plan cron runs within 5 s, not 60
    log = open(home / "server.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "evoci.cli", "server", "--port", str(port),
                                "--prefect-home", str(home)], env=env, cwd=home, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"

    def healthy():
        assert process.poll() is None, (home / "server.log").read_text()[-3000:]
        try:
            return httpx.get(f"{url}/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_for("the Prefect server", healthy, 120)
        from prefect.settings import PREFECT_API_URL, temporary_settings

        with temporary_settings(updates={PREFECT_API_URL: url}):
            yield url
    finally:
        stop(process)
        log.close()


@pytest.fixture(scope="module", autouse=True)
def every_minute(api, tmp_path_factory):
    """The schedule story's server side: calc on a one-minute cron (no faults)."""
    folder = tmp_path_factory.mktemp("every-minute")
    calc_repo(folder / "calc")
    dataset = write_dataset(folder / "calc.jsonl", [
        {"task_id": "calc", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    process = serve(api, folder, str(dataset), "--name", EVERY_MINUTE, "--cron", "* * * * *",
                    "--max-iterations", "5", "--home", str(folder / "home"))
    yield folder / "home"
    stop(process)


@pytest.fixture(scope="module")
def retried_demo(api, tmp_path_factory):
    """The retry story: a demo run whose test node of iteration 3 fails, then the UI's Retry.

    Returns the flow run as it was after the first attempt and after the retry.
    """
    from prefect import get_client
    from prefect.deployments import run_deployment

    folder = tmp_path_factory.mktemp("e2e")
    home = folder / "home"
    # test@3 fails 3 times: the first try and both node retries of the first attempt.
    process = serve(api, folder, "demo", "--name", E2E, "--no-schedule", "--home", str(home),
                    env={"EVOCI_INJECT_FAULTS": "test@3x3"})
    try:
        config = RunConfig(node_retries=2, retry_delays_s=[0.2]).model_dump(mode="json")
        flow_run = run_deployment(f"benchmark/{E2E}", parameters={"config": config}, timeout=0)

        def state(min_run_count: int = 1):
            with get_client(sync_client=True) as client:
                run = client.read_flow_run(flow_run.id)
            return run if run.state.is_final() and run.run_count >= min_run_count else None

        failed = wait_for("the demo run to fail", state, 240)
        failed_nodes = {name: node_states(run.id) for name, run in subflows(flow_run.id).items()}
        retry_flow_run(flow_run.id)  # what the UI's Retry button sends
        retried = wait_for("the retried run to finish", lambda: state(min_run_count=2), 240)
        yield {"id": flow_run.id, "failed": failed, "failed_nodes": failed_nodes, "retried": retried, "home": home}
    finally:
        stop(process)


def subflows(flow_run_id) -> dict:
    """The latest subflow run of each name (a retried subflow runs again under a new id)."""
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[flow_run_id])),
            sort=FlowRunSort.EXPECTED_START_TIME_ASC)
    return {run.name: run for run in runs}


def artifacts_of(flow_run_id) -> list:
    from prefect import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        return client.read_artifacts(artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))


def test_retry_from_the_ui_re_executes_only_the_failed_test_node_and_scores_right(retried_demo):
    first, retried = retried_demo["failed"], retried_demo["retried"]
    assert first.state.is_failed() and "injected fault test@3" in first.state.message
    [first_nodes] = retried_demo["failed_nodes"].values()
    assert first_nodes["test-3"] == "Failed" and first_nodes["programmer-3"] == "Completed"

    assert retried.state.is_completed(), retried.state
    assert retried.run_count == 2  # the same flow run, retried — not a new one
    evolve = subflows(retried_demo["id"])["evolve-demo"]
    states = {name: s for name, s in node_states(evolve.id).items() if not name.startswith("quality-")}  # measured beside the loop
    done_before = {"prepare", "test-oracle", "test-0", "test-1", "test-2"} | {
        f"{role}-{i}" for i in (1, 2, 3) for role in ("architect", "programmer")}
    assert {name for name, s in states.items() if s == "Cached"} == done_before  # read back, not re-run
    executed = {name for name, s in states.items() if s == "Completed" and not name.startswith("claim-")}
    assert executed == {"test-3"} | {
        f"{node}-{i}" for i in range(4, 10) for node in ("architect", "programmer", "test")}

    db = retried_demo["home"] / "evoci.duckdb"
    [(run_id,)] = query(db, "select run_id from runs")
    assert run_id.endswith("-" + retried_demo["id"].hex[:8])  # a deployment run is its own evoci run
    # The demo replays semverkit's history: n(c_i) target tests pass at iterations 0..9, n(c0) = 23,
    # n(c*) = 93, so a_i = (n_i − 23) / 70; solved at 9, so a_9 = 1 is carried to N = 20.
    n = [23, 30, 43, 59, 58, 68, 69, 79, 87, 93]
    a = [(n_i - 23) / 70 for n_i in n[1:]] + [1.0] * (20 - 9)
    [(evoscore, solved, turns)] = query(db, "select evoscore, solved, last_iteration from evoscore(gamma := 1.0)")
    assert evoscore == pytest.approx(sum(a) / 20) and solved and turns == 9
    assert [r[0] for r in query(db, "select n_passed from swe_ci_iterations order by iteration")] == n
    assert query(db, "select count(*), count(distinct (iteration, test_id)) from test_results") == [(930, 930)]
    assert query(db, "select node, kind from failures") == [("flow", "infrastructure")]

    # Artifacts: the run's summary (from the views, plots inline) and the task's table.
    summaries = [a for a in artifacts_of(retried_demo["id"]) if a.key == f"evoci-{run_id}-summary"]
    assert any(f"EvoScore **{evoscore:.3f}**" in a.data and "data:image/png;base64," in a.data for a in summaries)
    assert {a.type for a in artifacts_of(evolve.id)} >= {"markdown", "table", "image"}


def test_a_one_minute_cron_creates_a_run_that_completes(api, every_minute):
    from prefect import get_client
    from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName, FlowRunFilter

    def completed_scheduled_run():
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(),
                deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=[EVERY_MINUTE])))
        bad = [f"{r.name}: {r.state.name}: {r.state.message}" for r in runs
               if r.state and (r.state.is_failed() or r.state.is_crashed())]
        assert not bad, (bad, (every_minute.parent / "serve.log").read_text()[-6000:])
        return next((r for r in runs if r.auto_scheduled and r.state.is_completed()), None)

    run = wait_for("a scheduled run to complete", completed_scheduled_run, 150, every_s=1)
    db = every_minute / "evoci.duckdb"
    # Each scheduled run is its own evoci run, named after its flow run. Read as evoci's commands read: the
    # next minute's run may be writing the file, which DuckDB lets one process hold (the read waits for it).
    from evoci.store import reading

    with reading(db) as con:
        [(evoscore, solved)] = con.execute("select evoscore, solved from evoscore(gamma := 1.0) where run_id like ?",
                                           [f"%-{run.id.hex[:8]}"]).fetchall()
    # calc: n(c) = 2, 3, 3, 5 of 5 target tests at iterations 0..3, solved at 3, N = 5: a = 1/3, 1/3, 1, 1, 1
    assert solved and evoscore == pytest.approx((1 / 3 + 1 / 3 + 3) / 5)


def test_the_screenshot_script_shows_the_graph_and_the_artifacts(api, retried_demo, tmp_path):
    if not (os.environ.get("EVOCI_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("no Chromium here (scripts/chromium.sh installs it)")
    from PIL import Image

    out = subprocess.run([sys.executable, str(REPO / "scripts" / "screenshot.py"), "--api", api,
                          "--flow-run", str(retried_demo["id"]), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    sheet = Path(out.stdout.strip().splitlines()[-1])
    parts = sorted(p.name for p in tmp_path.glob("0*.png"))
    # the benchmark run and its evolve run (graph + artifacts tab), then both summaries rendered
    assert [p.split("-", 1)[1].split("-evoci")[0] for p in parts] == [
        "run-benchmark-demo.png", "run-evolve-demo.png", "artifact", "artifact"]
    image = Image.open(sheet)
    assert image.width == 1600 and image.height > 3000
    assert len(image.convert("RGB").getcolors(maxcolors=1 << 20) or []) > 1000  # a rendered page, not a blank one
