"""The real agent CLIs (pinned, installed by scripts/agents.sh) evolve the demo through the real
SWE-CI flow behind the model gateway, driven by the scripted model: at least two iterations per
CLI, tokens recorded as the server sent them, the CLI's own usage agreeing, and the key nowhere
but in the requests the gateway sent upstream.

A CLI that is not installed skips its test, unless ``EVOCI_REQUIRE_DOCKER=1`` (CI), which makes
it a failure: CI installs every CLI (``scripts/test.sh`` runs ``scripts/agents.sh``).
"""

from __future__ import annotations

import json
import os

import pytest

from evoci.agents.cli_agent import check_installed, resolve
from evoci.agents.install import PACKAGES, find, install_command
from evoci.agents.scripted import ScriptedLLMServer
from evoci.swe_ci.scripted_cli import NITR_NOTE, cli_script
from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.evolve import evolve
from evoci.swe_ci.demo import demo_task
from tests.flows.helpers import query, with_usage
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("prefect_server")]

SECRET = "sk-evoci-cli-SECRET-51c0de"
KEY_ENV = "EVOCI_CLI_TEST_KEY"
USAGE = {"input_tokens": 1200, "output_tokens": 60, "cached_tokens": 0}


def require(cli: str) -> None:
    if find(cli) is None:
        message = f"the {cli} CLI is not installed: run scripts/agents.sh (or `{install_command(cli)}`)"
        if os.environ.get("EVOCI_REQUIRE_DOCKER") == "1":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    check_installed.cache_clear()


def scripted_agent(cli: str, server: ScriptedLLMServer, protocol: str = "swe-ci"):
    """``cli``'s preset, resolved for ``protocol``, talking to ``server``."""
    base = server.url if cli == "claude-code" else f"{server.url}/v1"
    return resolve(AgentConfig(kind=cli, model="scripted-demo", options={"base_url": base, "api_key_env": KEY_ENV}),
                   protocol)


def run_demo(cli: str, tmp_path, monkeypatch, sandbox: SandboxConfig, max_iterations: int = 2):
    """Evolve the demo with ``cli`` in both roles; returns (summary, db, home, the server's requests, usage sent)."""
    require(cli)
    monkeypatch.setenv(KEY_ENV, SECRET)
    served: list[str] = []
    home = tmp_path / "home"
    with ScriptedLLMServer(with_usage(cli_script(cli), USAGE, served), strict=False) as server:
        agent = scripted_agent(cli, server)
        config = RunConfig(max_iterations=max_iterations, architect=agent, programmer=agent, sandbox=sandbox)
        summary = evolve(demo_task(tmp_path / "demo"), config, home=str(home))
        requests = list(server.requests)
    return summary, home / "evoci.duckdb", home, requests, [USAGE] * len(served)


def check_run(cli: str, summary, db, home, requests, sent) -> None:
    # Two iterations, both roles ok, real progress each time (the scripted model applies half the
    # demo's history per iteration, so the second reaches the oracle).
    assert summary.status == "done", summary
    rows = query(db, "select iteration, n_passed from swe_ci_iterations order by iteration")
    assert [i for i, _ in rows] == [0, 1, 2]
    assert rows[0][1] < rows[1][1] < rows[2][1] == summary.targets
    statuses = query(db, "select distinct architect_status, programmer_status from iterations where iteration > 0")
    assert statuses == [("ok", "ok")]
    # Every call the server answered is one agent_calls row with the tokens it sent.
    [(calls, tokens_in, tokens_out)] = query(db, "select count(*), sum(input_tokens), sum(output_tokens) from agent_calls")
    assert calls == len(requests) == len(sent) > 0
    assert (tokens_in, tokens_out) == (sum(u["input_tokens"] for u in sent), sum(u["output_tokens"] for u in sent))
    # The CLI's own account (its JSON output, trajectory or log) agrees with the gateway's.
    checks = [step["usage_check"] for (traj,) in query(db, "select trajectory::varchar from trajectories")
              for step in json.loads(traj) if isinstance(step, dict) and "usage_check" in step]
    assert checks, "no usage cross-check was recorded"
    if cli in ("opencode", "aider"):
        # Their own accounts leave requests out (OpenCode's title request; aider reports one of the
        # requests of a run, rounded): the difference is recorded, and the gateway never saw less.
        assert all(d["gateway"] >= d["cli"] for c in checks for d in c["differences"].values()), checks
    else:
        assert all(c["agrees"] for c in checks), checks
    # The key reached the upstream in the gateway's requests, and nothing the CLI or evoci kept.
    assert all(SECRET in " ".join(r.headers.values()) for r in requests)
    assert all(SECRET not in r.raw for r in requests)
    leaked = [p for p in home.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaked == []


def _matrix(clis):
    """Claude Code runs in the default run; the other CLIs are the full matrix (``heavy``, EVOCI_TEST_ALL=1)."""
    return [cli if cli == "claude-code" else pytest.param(cli, marks=pytest.mark.heavy) for cli in clis]


@pytest.mark.parametrize("cli", _matrix(PACKAGES))
def test_each_cli_evolves_the_demo_in_bubblewrap(cli, tmp_path, monkeypatch):
    check_run(cli, *run_demo(cli, tmp_path, monkeypatch, SandboxConfig(kind="local")))


# Every CLI, the whole test heavy (a Docker run of each). Codex runs without its own sandbox there
# (`danger-full-access`): its bubblewrap needs a user namespace, which the container refuses.
@pytest.mark.docker
@pytest.mark.heavy
@pytest.mark.parametrize("cli", list(PACKAGES))
def test_each_cli_evolves_the_demo_in_docker(cli, tmp_path, monkeypatch, base_image):
    # The installation is mounted read-only at its own path (a virtualenv with its base interpreter).
    check_run(cli, *run_demo(cli, tmp_path, monkeypatch, SandboxConfig(kind="docker")))


@pytest.mark.parametrize("cli", _matrix(["claude-code", "codex", "opencode", "aider"]))
def test_nitr_agent_mode_runs_the_cli_read_only_and_writes_its_files_answer(cli, tmp_path, monkeypatch):
    from evoci.flows.nitr import nitr

    require(cli)
    monkeypatch.setenv(KEY_ENV, SECRET)
    home, db = tmp_path / "home", tmp_path / "results.duckdb"
    with ScriptedLLMServer(cli_script(cli), strict=False) as server:
        agent = scripted_agent(cli, server, "nitr")
        config = RunConfig(run_id=f"nitr-{cli}", protocol="nitr", architect=agent, programmer=agent, node_retries=0)
        nitr("builtin", config, select={"id": ["001"]}, home=str(home), db=str(db))
        requests = list(server.requests)
    [(status, steps)] = query(db, "select status, trajectory::varchar from trajectories")
    step = next(s for s in json.loads(steps) if isinstance(s, dict) and s.get("preset") == cli)
    assert status == "ok", (step.get("answer"), step.get("stdout_tail", "")[-800:])
    assert {"claude-code": "Read,Glob,Grep,LS", "codex": "read-only", "opencode": "custom/scripted-demo",
            "aider": "ask"}[cli] in step["argv"]  # the read-only mode (OpenCode's is its seeded permissions)
    written = [p for p in home.rglob(NITR_NOTE) if p.is_file()]
    assert written and written[0].read_text() == "written by the scripted model\n"  # evoci wrote the answer's file
    [(calls,)] = query(db, "select count(*) from agent_calls")
    assert calls == len(requests) > 0


# SWE-EVO and SWE-Bench-CL run a preset as their one agent, in bubblewrap: the scripted model does
# not solve their demos (it writes the SWE-CI demo's files), so what is checked is what a user
# sees of any CLI: each instance graded from the CLI's diff, the agent ok, every call accounted.
@pytest.mark.parametrize("cli", _matrix(PACKAGES))
def test_swe_evo_runs_each_preset_as_its_agent(cli, tmp_path, monkeypatch):
    from evoci.flows.swe_evo import swe_evo

    require(cli)
    monkeypatch.setenv(KEY_ENV, SECRET)
    home = tmp_path / "home"
    with ScriptedLLMServer(cli_script(cli), strict=False) as server:
        agent = scripted_agent(cli, server, "swe-evo")
        summaries = swe_evo("swe-evo-demo", RunConfig(protocol="swe-evo", architect=agent, programmer=agent,
                                                      sandbox=SandboxConfig(kind="local"), node_retries=0),
                            home=str(home))
        requests = list(server.requests)
    db = home / "evoci.duckdb"
    assert len(summaries) == 3
    # Each instance got the CLI's diff as its prediction, and it was graded. aider is the exception
    # of the scripted model, not of the CLI: it edits only from the reply, and the script finds no
    # SWE-CI demo file in aider's chat to rewrite, so aider's diff is empty: scored, as no prediction.
    graded = "no_prediction" if cli == "aider" else "ok"
    assert query(db, "select distinct status from gradings") == [(graded,)]
    assert query(db, "select count(distinct task_id), count(*) from gradings") == [(3, 3)]
    assert query(db, "select distinct status from trajectories") == [("ok",)]
    [(calls,)] = query(db, "select count(*) from agent_calls")
    assert calls == len(requests) > 0


@pytest.mark.parametrize("cli", _matrix(PACKAGES))
def test_swe_bench_cl_runs_each_preset_as_its_agent(cli, tmp_path, monkeypatch):
    from evoci.flows.continual import continual
    from evoci.swe_bench_cl.demo import build_cl_demo
    from evoci.swe_bench_cl.embedding import EmbeddingConfig

    require(cli)
    monkeypatch.setenv(KEY_ENV, SECRET)
    home = tmp_path / "home"
    # The demo's first issue alone: its two cells (memory off, then re-tested with its own experience).
    curriculum = json.loads(build_cl_demo(home / "swe-bench-cl-demo").read_text())
    sequence = curriculum["sequences"][0]
    sequence["tasks"] = sequence["tasks"][:1]
    sequence["repo_path"] = str(home / "swe-bench-cl-demo" / "strkit")
    curriculum["sequences"] = [sequence]
    path = tmp_path / "one-issue.json"
    path.write_text(json.dumps(curriculum))
    with ScriptedLLMServer(cli_script(cli), strict=False) as server:
        agent = scripted_agent(cli, server, "swe-bench-cl")
        config = RunConfig(protocol="swe-bench-cl", programmer=agent, sandbox=SandboxConfig(kind="local"), node_retries=0)
        [summary] = continual(str(path), config, matrix="core", home=str(home), embedding=EmbeddingConfig(kind="hashing"))
        requests = list(server.requests)
    db = home / "evoci.duckdb"
    assert summary.status == "done", summary
    # Both cells of the issue were attempted by the CLI and graded (resolved is NULL only for an ungraded issue).
    cells = query(db, "select memory_stage, resolved is not null from cl_attempts where run_id = ? order by all",
                  [summary.run_id])
    assert cells == [(0, True), (1, True)]
    assert query(db, "select distinct status from trajectories") == [("ok",)]
    [(calls,)] = query(db, "select count(*) from agent_calls")
    assert calls == len(requests) > 0
