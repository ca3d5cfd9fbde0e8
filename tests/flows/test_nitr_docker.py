"""The built-in NITR probes in the Docker sandbox land in the same categories as on the host.

The C++ probe builds with CMake, runs its GoogleTest tests through ctest and is categorised
in evoci's C++ image, built offline on top of the base image (no registry).
"""

from __future__ import annotations

import json

import pytest

from evoci.domain import SandboxConfig
from evoci.flows.nitr import nitr
from evoci.nitr.agents import SOLUTIONS
from tests.flows.helpers import query
from tests.flows.test_nitr import categories, expected, reference_config
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("prefect_server", "base_image")]


def docker_config(run_id: str, solution):
    return reference_config(run_id, solution).model_copy(update={"sandbox": SandboxConfig(kind="docker")})


@pytest.mark.parametrize("solution", SOLUTIONS)
def test_every_reference_lands_in_its_category_in_docker(tmp_path, solution):
    db = tmp_path / "results.duckdb"
    nitr("builtin", docker_config(f"docker-{solution}", solution), home=str(tmp_path / "home"), db=str(db))
    got = categories(db, f"docker-{solution}")
    assert len(got) == 5
    assert got == {probe: expected(probe)[solution] for probe in got}
    assert query(db, "select config->>'$.sandbox.kind' from runs") == [("docker",)]
    if solution == "intended":  # the GoogleTest binary ran under ctest, in the C++ image
        grade = next(p for p in (tmp_path / "home" / "runs" / f"docker-{solution}").rglob("grade.json")
                     if "005." in str(p))
        tail = {m["name"]: m["output_tail"] for m in json.loads(grade.read_text())["modules"]}
        assert "100% tests passed" in tail["percent_tests"]
