"""A silent network in a container: another host does not answer, the container's own loopback works,
and the capability that set the route up is gone before the command runs."""

from __future__ import annotations

import json

import pytest

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox.base import TESTBED, Layout
from evoci.sandbox.docker import open_docker_sandbox
from tests.sandbox.docker.conftest import TEST_OPTIONS
from tests.sandbox.silent_probe import PROBE, host_listeners

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leftover_containers")]

SILENT = Layout(root="/testbed", as_root=True, silent_network=True)


def probe(base_image, docker_paths, workspace, layout: Layout) -> dict:
    config = SandboxConfig(kind="docker", options=TEST_OPTIONS)
    sandbox = open_docker_sandbox(config, workspace, EnvironmentSpec(), docker_paths, ephemeral=True, layout=layout)
    try:
        with host_listeners() as seen_from_host:
            result = sandbox.exec(["python", "-c", PROBE, *seen_from_host], timeout=60)
    finally:
        sandbox.cleanup()
    assert result.exit_code == 0, result
    return json.loads(result.stdout)


def test_another_host_does_not_answer_and_the_capability_is_gone(base_image, docker_paths, workspace):
    seen = probe(base_image, docker_paths, workspace, SILENT)
    assert seen["far"].startswith("timeout") and seen["other"].startswith("timeout")
    assert seen["loopback"] == "ECONNREFUSED"
    assert seen["host"].startswith("timeout") and seen["host_unix"] == "ECONNREFUSED"  # the host's, listening
    assert seen["interfaces"] == ["lo"]
    assert seen["take_lo_down"] == "EPERM" and seen["capabilities"] == []


def test_without_it_another_host_is_unreachable_at_once(base_image, docker_paths, workspace):
    seen = probe(base_image, docker_paths, workspace, TESTBED)
    assert seen["far"] == "ENETUNREACH" and seen["capabilities"] == []
