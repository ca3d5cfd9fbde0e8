"""Two commands on the same run at once (a schedule firing while a manual run is alive, a command
started twice): one writes, the other is refused at once with exit 75 — the scores are always
exactly those of one uninterrupted run.

One trial per protocol by default; ``EVOCI_CONCURRENT_TRIALS=10`` runs ten, and
``EVOCI_CONCURRENT_FULL=1`` runs the whole SWE-CI demo (20 iterations) instead of two iterations.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.flows.helpers import query

pytestmark = pytest.mark.slow

TRIALS = int(os.environ.get("EVOCI_CONCURRENT_TRIALS", "1"))
DEMO_ITERATIONS = "20" if os.environ.get("EVOCI_CONCURRENT_FULL") else "2"
COMMANDS = {
    "swe-ci": ["run", "demo", "--max-iterations", DEMO_ITERATIONS],
    "swe-evo": ["run", "swe-evo-demo", "--agent", "gold"],
}
# What a person reads as the run's scores: per task and iteration, the status and every target's outcome,
# and the run-level headline of the protocol's own view.
SCORES = {
    "swe-ci": """select i.task_id, i.iteration, i.attempt, i.status, r.test_id, r.outcome
                 from iterations i join test_results r using (run_id, task_id, iteration, attempt)
                 union all select task_id, -1, 0, cast(evoscore as varchar), '', cast(solved as varchar)
                 from evoscore(gamma := 1)
                 union all select task_id, -2, 0, status, '', coalesce(reason, '') from tasks
                 order by all""",
    "swe-evo": """select task_id, 1, 0, cast(resolved as varchar), cast(fix_rate as varchar), task_status
                  from swe_evo_instances
                  union all select i.task_id, i.iteration, i.attempt, i.status, r.test_id, r.outcome
                  from iterations i join test_results r using (run_id, task_id, iteration, attempt)
                  order by all""",
}


def run(args: list[str], home, env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "evoci.cli", *args, "--home", str(home)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def ended(proc: subprocess.Popen) -> tuple[str, int]:
    """What the command printed and its exit code; a command still running after 30 minutes is killed."""
    try:
        return proc.communicate(timeout=1800)[0], proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


@pytest.mark.parametrize("protocol", sorted(COMMANDS))
def test_two_commands_on_one_run_never_both_write(tmp_path, protocol):
    # As a user runs them: each command with Prefect's temporary server, one Prefect home.
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="900")
    out, code = ended(run(COMMANDS[protocol], tmp_path / "alone", env))
    assert code == 0, out
    expected = query(tmp_path / "alone" / "evoci.duckdb", SCORES[protocol])
    assert expected
    for trial in range(TRIALS):
        home = tmp_path / f"trial-{trial}"
        both = [run(COMMANDS[protocol], home, env) for _ in range(2)]
        outcomes = [ended(p) for p in both]
        codes = sorted(code for _, code in outcomes)
        refused = [text for text, code in outcomes if code != 0]
        assert codes in ([0, 0], [0, 75]), outcomes  # both 0 only if one began after the other ended
        for text in refused:
            assert "is being written by another evoci process" in text and "since" in text, text
            assert "scored" not in text  # the other process's results are not shown as this command's
        assert query(home / "evoci.duckdb", SCORES[protocol]) == expected, f"trial {trial}: {outcomes}"
        assert query(home / "evoci.duckdb", "select count(*) from leases") == [(0,)]
