"""Fixtures for the Docker sandbox tests: the engine, the base image, sandboxes over temp folders.

No engine → the tests skip, unless ``EVOCI_REQUIRE_DOCKER=1`` (CI sets it), which turns the
skip into a failure saying how to start one. Images are shared by the whole session.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox.docker import DockerSandbox, DockerUnavailable, bootstrap_base_image, connect, open_docker_sandbox
from evoci.settings import Paths

# Tight limits, so a runaway test is cheap to contain.
TEST_OPTIONS = {"memory": "256m", "pids_limit": 64, "cpus": 1}


@pytest.fixture(scope="session")
def docker_client() -> docker.DockerClient:
    try:
        return connect()
    except DockerUnavailable as exc:
        if os.environ.get("EVOCI_REQUIRE_DOCKER") == "1":
            pytest.fail(f"EVOCI_REQUIRE_DOCKER=1 but {exc}", pytrace=False)
        pytest.skip(f"no Docker engine: {exc}")


@pytest.fixture(scope="session")
def base_image(docker_client: docker.DockerClient) -> str:
    """evoci's base image, built offline if the engine lacks it (a few minutes, once)."""
    return bootstrap_base_image(client=docker_client, ca_bundle=os.environ.get("EVOCI_CA_BUNDLE") or "system")


@pytest.fixture(scope="session")
def docker_paths(tmp_path_factory: pytest.TempPathFactory) -> Paths:
    """One evoci home for the session, so every test shares one image index."""
    return Paths(home=tmp_path_factory.mktemp("evoci-home"))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def open_sandbox(base_image: str, docker_paths: Paths) -> Callable[..., DockerSandbox]:
    """Open a Docker sandbox over a folder; every sandbox opened is cleaned up after the test."""
    opened: list[DockerSandbox] = []

    def opener(workspace: Path, environment: EnvironmentSpec | None = None, *, shared: dict | None = None,
               **options) -> DockerSandbox:
        config = SandboxConfig(kind="docker", options={**TEST_OPTIONS, **options})
        sandbox = open_docker_sandbox(config, workspace, environment or EnvironmentSpec(), docker_paths, shared=shared)
        opened.append(sandbox)
        return sandbox

    yield opener
    for sandbox in opened:
        sandbox.cleanup()


@pytest.fixture
def sandbox(open_sandbox: Callable[..., DockerSandbox], workspace: Path) -> DockerSandbox:
    return open_sandbox(workspace)


@pytest.fixture(scope="module")
def no_leftover_containers(docker_client: docker.DockerClient, tmp_path_factory):
    """After the module, no container labelled evoci=1 may remain (checked in this worker's Docker turn)."""
    from tests.serial import docker_turn

    yield
    with docker_turn(tmp_path_factory):
        left = docker_client.containers.list(all=True, filters={"label": "evoci=1"})
    assert not left, f"containers left behind: {[c.short_id for c in left]}"
