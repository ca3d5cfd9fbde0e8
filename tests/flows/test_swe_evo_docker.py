"""The SWE-EVO demo graded in Docker containers scores exactly as in the local sandbox."""

from __future__ import annotations

import pytest

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from flows.swe_evo import swe_evo
from tests.flows.helpers import query
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "base_image")]


def test_gold_and_empty_in_docker_give_the_local_rows(tmp_path):
    rows = {}
    for kind in ("local", "docker"):
        home = tmp_path / kind
        for agent in ("gold", "empty"):
            config = RunConfig(protocol="swe-evo", programmer=AgentConfig(kind=agent), sandbox=SandboxConfig(kind=kind),
                               test_timeout_s=300)
            swe_evo("swe-evo-demo", config, home=str(home))
        rows[kind] = query(home / "evoci.duckdb", """
            select r.config->>'$.programmer.kind' as agent, i.task_id, i.f2p_passed, i.p2p_passed, i.resolved, i.fix_rate, i.flags
            from swe_evo_instances i join runs r using (run_id) order by agent, i.task_id""")
    assert rows["docker"] == rows["local"]
    assert [r[4] for r in rows["docker"]] == [False, False, False, True, True, True]  # empty, then gold
    assert query(tmp_path / "docker" / "evoci.duckdb", "select distinct config->>'$.sandbox.kind' from runs") == [("docker",)]
