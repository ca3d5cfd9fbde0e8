"""Red team: code under test that prints the evaluator's own failure texts cannot void its grade.

A hostile command agent makes the probe's code print what a broken build setup prints
("could not load cache", "No tests were found!!!") and exit 127, the code a shell gives
for a missing program, as soon as the hidden tests import it. Infrastructure is what the
harness proves (its own lookup finds the program; the build it configured is there), so
the probe is scored as the agent's failure, never left unscored as an infrastructure
error, through the real flow in the local sandbox (bubblewrap) and in Docker.
"""

from __future__ import annotations

import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.flows.nitr import nitr
from tests.flows.helpers import query
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

FORGE = r"""
import pathlib
init = pathlib.Path("src/__init__.py")
init.write_text(init.read_text() + '''
import os as _os, sys as _sys
print("Error: could not load cache")
print("*** No tests were found!!!", file=_sys.stderr)
_sys.stderr.flush(); _sys.stdout.flush()
_os._exit(127)
''')
"""
SANDBOXES = [SandboxConfig(), pytest.param(SandboxConfig(kind="docker"), marks=pytest.mark.docker)]


@pytest.mark.parametrize("sandbox", SANDBOXES, ids=["local", "docker"])
def test_printed_infrastructure_text_is_scored_as_the_agents_failure(tmp_path, sandbox, request):
    if sandbox.kind == "docker":
        request.getfixturevalue("base_image")
    agent = AgentConfig(kind="command", options={"command": ["python", "-c", "import os; exec(os.environ['FORGE'])"],
                                                 "env": {"FORGE": FORGE}, "timeout_s": 120})
    config = RunConfig(run_id="forge", protocol="nitr", programmer=agent, architect=agent, node_retries=0, sandbox=sandbox)
    db = tmp_path / "results.duckdb"
    [summary] = nitr("builtin", config, select={"id": ["003"]}, home=str(tmp_path / "home"), db=str(db))
    assert summary.status == "done" and summary.category in ("F", "B")
    assert query(db, "select status from tasks where run_id = 'forge'") == [("done",)]
    assert query(db, "select outcome from test_results where run_id = 'forge' and test_id like 'unit_test:%'") == [
        ("failed",)]
    assert query(db, "select count(*) from failures where run_id = 'forge'") == [(0,)]
    assert query(db, "select complete from run_completeness where run_id = 'forge'") == [(True,)]
