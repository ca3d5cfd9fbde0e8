"""The demo in Docker containers scores exactly as in the local sandbox."""

from __future__ import annotations

import pytest

from evoci.cli import main
from tests.swe_ci.demo.expected import PASSING_WITH_ORACLE_TESTS
from tests.flows.helpers import query
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("prefect_server", "base_image")]


def test_demo_with_the_docker_sandbox_gives_the_local_sandbox_scores(tmp_path):
    local, docker = tmp_path / "local", tmp_path / "docker"
    assert main(["demo", "--home", str(local)]) == 0
    assert main(["demo", "--home", str(docker), "--sandbox", "docker"]) == 0
    scores = """select i.iteration, i.n_passed, i.a, i.regressions, i.fixes, e.evoscore, z.zero_regression
                from swe_ci_iterations i join evoscore(gamma := 1.0) e using (run_id, task_id)
                join swe_ci_zero_regression z using (run_id, task_id) order by i.iteration"""
    in_docker = query(docker / "evoci.duckdb", scores)
    assert in_docker == query(local / "evoci.duckdb", scores)
    assert [row[1] for row in in_docker] == list(PASSING_WITH_ORACLE_TESTS)
    # The test runs really happened in containers: the environment became an image.
    assert query(docker / "evoci.duckdb", "select config->>'$.sandbox.kind' from runs") == [("docker",)]
    assert (docker / "docker" / "images.json").exists()
    # Both kept the test modules' rewritten bytecode for later iterations (evoci.grading.bytecode),
    # and the scores above are the same with it.
    for home in (local, docker):
        assert list((home / "bytecode").rglob("*-pytest-*.pyc")), home
