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
