"""Inside a Prefect run each container holds one slot of a strict global concurrency limit."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox.docker import ensure_concurrency_limit, open_docker_sandbox

pytestmark = [pytest.mark.docker, pytest.mark.prefect_server, pytest.mark.usefixtures("no_leftover_containers")]


def _active_slots(name: str) -> int:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(name).active_slots


def test_evoci_creates_its_limit_and_each_container_holds_a_slot(prefect_server, base_image, docker_paths, workspace):
    from prefect import flow

    seen: list[int] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            try:
                seen.append(_active_slots("evoci-docker"))
            except Exception:  # not created yet
                pass
            time.sleep(0.2)

    @flow
    def run_one() -> int | None:
        config = SandboxConfig(kind="docker", options={"concurrency_limit": 3})
        sandbox = open_docker_sandbox(config, workspace, EnvironmentSpec(), docker_paths)
        return sandbox.exec(["sleep", "2"], timeout=60).exit_code

    # The thread must see this test's Prefect settings (they live in context variables).
    watcher = threading.Thread(target=contextvars.copy_context().run, args=(watch,), daemon=True)
    watcher.start()
    try:
        assert run_one() == 0
    finally:
        stop.set()
        watcher.join()
    assert 1 in seen  # the slot was held while the container ran
    assert _active_slots("evoci-docker") == 0  # and released after


def test_a_misspelt_user_limit_fails_loudly(prefect_server, base_image, docker_paths, workspace):
    from prefect import flow

    @flow
    def run_one() -> None:
        config = SandboxConfig(kind="docker", options={"concurrency_limit_name": "evoci-dockr"})
        open_docker_sandbox(config, workspace, EnvironmentSpec(), docker_paths).exec(["true"], timeout=60)

    with pytest.raises(Exception, match="evoci-dockr"):
        run_one()


def test_ensure_concurrency_limit_resizes(prefect_server):
    from prefect import get_client

    ensure_concurrency_limit("evoci-resize", 1)
    ensure_concurrency_limit("evoci-resize", 4)
    with get_client(sync_client=True) as client:
        assert client.read_global_concurrency_limit_by_name("evoci-resize").limit == 4
