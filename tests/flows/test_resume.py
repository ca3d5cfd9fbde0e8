"""A run killed with SIGKILL resumes when the same command is run again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from tests.flows.helpers import flow_runs_named, node_states
from tests.repos import calc_repo, write_dataset


def recorded_iterations(db) -> set[int]:
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error:  # missing, or the run holds it for a moment
        return set()
    try:
        return {i for (i,) in con.execute("select iteration from iterations").fetchall()}
    except duckdb.Error:
        return set()
    finally:
        con.close()


def test_sigkill_mid_run_then_the_same_command_finishes_without_duplicates_or_recomputation(tmp_path, prefect_server):
    calc_repo(tmp_path / "calc", slow_s=1.0)
    dataset = write_dataset(tmp_path / "resume.jsonl", [
        {"task_id": "calc-resume", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}])
    home = tmp_path / "home"
    db = home / "evoci.duckdb"
    command = [sys.executable, "-m", "evoci.cli", "run", str(dataset), "--home", str(home), "--max-iterations", "5"]
    env = {**os.environ, "PREFECT_API_URL": prefect_server}

    first = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while len(recorded_iterations(db)) < 2:  # iterations 0 and 1 recorded: kill it
        assert first.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline, "the run made no progress"
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    completed_before_kill = recorded_iterations(db)
    assert completed_before_kill >= {0, 1} and 3 not in completed_before_kill

    second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr

    con = duckdb.connect(str(db), read_only=True)
    counts = con.execute("""select (select count(*) from iterations), (select count(*) from test_results),
                                   (select count(*) from agent_calls), (select count(*) from targets),
                                   (select count(*) from runs), (select count(*) from tasks)""").fetchone()
    con.close()
    # Iterations 0..3 (solved at 3), 5 target tests each, 2 replay calls per iteration ≥ 1: each row once.
    assert counts == (4, 20, 6, 5, 1, 1)

    runs = flow_runs_named("evolve-calc-resume")
    assert len(runs) == 2
    states = node_states(runs[1].id)
    for iteration in completed_before_kill:
        names = [f"test-{iteration}"] + ([f"architect-{iteration}", f"programmer-{iteration}"] if iteration else [])
        for name in names:
            assert states[name] == "Cached", f"{name} was recomputed after the kill: {states}"
    assert states["test-oracle"] == "Cached"
    assert states["test-3"] == "Completed"  # work left at the kill was done by the second run
