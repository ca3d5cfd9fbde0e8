"""Options and connection errors: no engine needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.errors import InputError, SandboxError
from evoci.sandbox.docker import DockerOptions, DockerUnavailable, InvalidDockerOptions, open_docker_sandbox
from evoci.settings import Paths


def test_defaults():
    options = DockerOptions.parse({})
    assert (options.base_image, options.network, options.concurrency_limit_name) == (
        "evoci/base:bookworm", "none", "evoci-docker"
    )


def test_an_unknown_option_names_the_valid_ones(tmp_path: Path):
    config = SandboxConfig(kind="docker", options={"memroy": "1g"})
    with pytest.raises(InvalidDockerOptions) as caught:
        open_docker_sandbox(config, tmp_path, EnvironmentSpec(), Paths(home=tmp_path))
    message = str(caught.value)
    assert "'memroy'" in message and "memory" in message and "pids_limit" in message
    assert isinstance(caught.value, InputError)


def test_a_bad_value_says_which_option():
    with pytest.raises(InvalidDockerOptions, match="memory"):
        DockerOptions.parse({"memory": "lots"})


def test_base_url_is_an_alias_of_docker_host():
    assert DockerOptions.parse({"base_url": "unix:///x.sock"}).docker_host == "unix:///x.sock"


def test_an_unreachable_engine_raises_docker_unavailable(tmp_path: Path):
    config = SandboxConfig(kind="docker", options={"docker_host": f"unix://{tmp_path}/no-such.sock"})
    with pytest.raises(DockerUnavailable) as caught:
        open_docker_sandbox(config, tmp_path, EnvironmentSpec(), Paths(home=tmp_path))
    assert isinstance(caught.value, SandboxError)
    assert "--sandbox local" in str(caught.value)


def test_the_public_api_is_pinned():
    import evoci.sandbox.docker as package

    assert sorted(package.__all__) == sorted(
        [
            "ContainerError", "DockerOptions", "DockerSandbox", "DockerUnavailable", "EnvironmentImage", "ImageInfo",
            "ImageMissing", "ImageStore", "InvalidDockerOptions", "bootstrap_base_image", "connect",
            "ensure_concurrency_limit", "install_signal_cleanup", "open_docker_sandbox", "prune",
        ]
    )
    assert all(hasattr(package, name) for name in package.__all__)
