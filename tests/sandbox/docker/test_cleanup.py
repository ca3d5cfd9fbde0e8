"""Nothing is left behind: prune, and containers removed when the harness is signalled."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

import pytest

from evoci.sandbox.docker import prune

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leftover_containers")]


def _unlabelled_image(client) -> str:
    """A one-file image without evoci's label (containers inherit their image's labels)."""
    if client.images.list(name="evoci-test/unlabelled"):
        return "evoci-test/unlabelled:1"
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("empty"), io.BytesIO(b""))
    client.api.import_image_from_data(data.getvalue(), repository="evoci-test/unlabelled", tag="1")
    return "evoci-test/unlabelled:1"


def test_prune_removes_every_evoci_container(docker_client, base_image):
    stray = docker_client.containers.create(base_image, ["true"], labels={"evoci.run_id": "gone"})
    other = docker_client.containers.create(_unlabelled_image(docker_client), ["true"])
    try:
        assert stray.labels["evoci"] == "1"  # from the image
        assert stray.id in prune(docker_client)
        assert docker_client.containers.list(all=True, filters={"label": "evoci=1"}) == []
        assert docker_client.containers.get(other.id)  # not evoci's: kept
    finally:
        other.remove(force=True)


def test_prune_older_than_keeps_young_containers(docker_client, base_image):
    young = docker_client.containers.create(base_image, ["true"], labels={"evoci": "1"})
    try:
        assert prune(docker_client, older_than=3600) == []
    finally:
        young.remove(force=True)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_harness_removes_its_live_container(signum, docker_client, base_image, docker_paths, tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    marker = f"signal-{signum}-{os.getpid()}"
    script = textwrap.dedent(
        f"""
        from pathlib import Path
        from evoci.domain import EnvironmentSpec, SandboxConfig
        from evoci.sandbox.docker import open_docker_sandbox
        from evoci.settings import Paths
        sandbox = open_docker_sandbox(
            SandboxConfig(kind="docker"), Path({str(workspace)!r}), EnvironmentSpec(),
            Paths(home=Path({str(docker_paths.home)!r})), run_id={marker!r},
        )
        print("ready", flush=True)
        sandbox.exec(["sleep", "600"], timeout=600)
        """
    )
    harness = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert harness.stdout.readline().strip() == "ready", harness.stderr.read()
        deadline = time.monotonic() + 30
        while not docker_client.containers.list(filters={"label": f"evoci.run_id={marker}"}):
            assert time.monotonic() < deadline, "the harness never started its container"
            time.sleep(0.1)
        harness.send_signal(signum)
        harness.wait(timeout=30)
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
    assert harness.returncode != 0
    assert docker_client.containers.list(all=True, filters={"label": f"evoci.run_id={marker}"}) == []
