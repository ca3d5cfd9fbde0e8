"""The red team against SWE-Bench-CL's grading (the shared SWE-bench grader), through the real ``continual`` flow.

A command agent writes no fix: at every cell it appends code that prints a ``PASSED`` line for
every test pytest collects and then kills its own test process. Nothing it printed may be graded:
no cell resolves, no test passes, and every graded attempt is flagged.
"""

from __future__ import annotations

import json

import pytest

from evoci.domain import AgentConfig, RunConfig
from evoci.flows.continual import continual
from evoci.swe_bench_cl.embedding import EmbeddingConfig
from evoci.swe_bench_cl.memory import MemoryConfig
from tests.flows.helpers import query
from tests.security.test_swe_evo_attacks import PRINT_AND_DIE

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

APPEND = f"import pathlib\np = pathlib.Path('src/strkit/__init__.py')\np.write_text(p.read_text() + {PRINT_AND_DIE!r})\n"


def test_a_command_agent_that_prints_passed_lines_and_kills_its_tests_resolves_no_cell(tmp_path):
    # The script travels in the environment: command templates are str.format()ted (its braces would be placeholders).
    agent = AgentConfig(kind="command", options={"command": ["python", "-c", "import os; exec(os.environ['HOSTILE'])"],
                                                 "env": {"HOSTILE": APPEND}, "timeout_s": 120})
    config = RunConfig(protocol="swe-bench-cl", programmer=agent, test_timeout_s=300)
    [summary] = continual("swe-bench-cl-demo", config, home=str(tmp_path / "home"), embedding=EmbeddingConfig(kind="hashing"),
                          matrix="core", memory=MemoryConfig(enabled=False))
    db = tmp_path / "home" / "evoci.duckdb"
    rows = query(db, "select status, integrity_flags from iterations where run_id = ? and status <> 'no_prediction'",
                 [summary.run_id])
    [(passed,)] = query(db, "select count(*) from test_results where run_id = ? and outcome = 'passed'", [summary.run_id])
    assert rows and passed == 0, json.dumps(rows[:2])
    assert all(any("SIGKILL" in f and "not graded" in f for f in flags) for _, flags in rows), rows[:2]
