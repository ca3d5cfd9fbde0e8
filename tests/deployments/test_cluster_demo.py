"""The cluster demo, as a user runs it: two workers take one run's tasks; every fact lands once."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_cluster_demo_spreads_tasks_over_two_workers_and_matches_the_embedded_default():
    ran = subprocess.run([sys.executable, str(REPO / "scripts/cluster_demo.py"), "--tasks", "4", "--iterations", "2"],
                         capture_output=True, text=True, timeout=1800)
    out = ran.stdout
    assert ran.returncode == 0, out[-4000:] + ran.stderr[-4000:]
    ran_by = {w: int(n) for w, n in re.findall(r"(worker-\d) ran (\d+) task", out)}
    assert sorted(ran_by) == ["worker-1", "worker-2"] and min(ran_by.values()) >= 1 and sum(ran_by.values()) == 4
    assert "OK: 4 tasks over 2 workers, every fact once" in out
    assert "worker-2 in its own network namespace (loopback only; two doors" in out  # and it proved it, or FAILED


@pytest.mark.slow
def test_a_worker_killed_mid_task_and_started_again_completes_the_run_with_every_fact_once():
    ran = subprocess.run([sys.executable, str(REPO / "scripts/cluster_demo.py"), "--tasks", "4", "--iterations", "2",
                          "--kill-worker"], capture_output=True, text=True, timeout=1800)
    out = ran.stdout
    assert ran.returncode == 0, out[-6000:] + ran.stderr[-4000:]
    assert re.search(r"worker-1 and \d+ process\(es\) under it killed \(SIGKILL\) while it evolved a task", out)
    assert re.search(r"lost its worker \(the task's lease expired", out)  # noticed by its lease, queued again
    assert "RunBusy" not in out  # no live flow run was taken for lost: its twin would have been refused
    assert "OK: 4 tasks over 2 workers, every fact once" in out


@pytest.mark.slow
@pytest.mark.timeout(1800)
# SWE-EVO in the default run; NITR and SWE-Bench-CL (its core matrix) with the full matrix
# (EVOCI_TEST_ALL=1): each is the same fan-out, and together they would add ~15 minutes to CI.
@pytest.mark.parametrize("protocol, units", [("swe-evo", 3), pytest.param("nitr", 2, marks=pytest.mark.heavy),
                                             pytest.param("swe-bench-cl", 1, marks=pytest.mark.heavy)])
def test_each_protocols_demo_runs_every_unit_on_a_pool_worker_and_matches_the_embedded_default(protocol, units):
    """SWE-EVO instances, NITR probes, SWE-Bench-CL sequences: one flow run each, taken by the worker."""
    ran = subprocess.run([sys.executable, str(REPO / "scripts/cluster_demo.py"), "--protocol", protocol, "--workers", "1",
                          "--no-netns"], capture_output=True, text=True, timeout=1700)
    out = ran.stdout
    assert ran.returncode == 0, out[-6000:] + ran.stderr[-4000:]
    assert re.findall(r"(worker-\d) ran (\d+) unit", out) == [("worker-1", str(units))]  # in its own home, not in-process
    assert f"OK: {units} units over 1 worker, every fact once, the same numbers as the embedded default" in out
