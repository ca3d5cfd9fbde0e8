"""Session-wide set-up: a real Prefect server for the flow tests (started once per test process).

The suite runs in two processes (pytest-xdist, ``scripts/test.sh``). Each has its own Prefect
home and evoci home, so neither waits on the other's SQLite or DuckDB file, and the tests that
need the Docker engine take turns (``tests.serial``): the image store and the container checks
see only their own work.
"""

from __future__ import annotations

import os
import tempfile

_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:  # before Prefect is imported: it reads PREFECT_HOME once
    os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix=f"evoci-test-prefect-{_worker}-")
    os.environ["EVOCI_HOME"] = tempfile.mkdtemp(prefix=f"evoci-test-home-{_worker}-")

# The agent CLIs scripts/agents.sh installs (the same default folder), for a test run without scripts/test.sh.
os.environ.setdefault("EVOCI_TOOLS", os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                                                  "evoci", "tools"))

# Read by Prefect at import: quiet, and patient with a busy 2-core machine.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")

import pytest  # noqa: E402

# The default run (the README's test command, CI) leaves out the tests marked ``heavy``: the same
# checks again over every agent CLI and both sandboxes, which would take it past CI's budget. Each
# heavy test has a default-run sibling of the same kind (one CLI, the bubblewrap sandbox).
FULL_MATRIX = os.environ.get("EVOCI_TEST_ALL") == "1"


def pytest_collection_modifyitems(config, items):
    if FULL_MATRIX:
        return
    heavy = [item for item in items if item.get_closest_marker("heavy")]
    if heavy:
        config.hook.pytest_deselected(items=heavy)
        items[:] = [item for item in items if not item.get_closest_marker("heavy")]


@pytest.fixture(scope="session")
def prefect_server():
    """A temporary Prefect server (SQLite) for this session; yields its API URL."""
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    # A busy machine may need longer: EVOCI_TEST_PREFECT_STARTUP_S (default 120).
    with prefect_test_harness(server_startup_timeout=int(os.environ.get("EVOCI_TEST_PREFECT_STARTUP_S", "120"))):
        yield PREFECT_API_URL.value()


@pytest.fixture(autouse=True)
def one_docker_test_at_a_time(request, tmp_path_factory):
    """A Docker test runs while no other worker runs one (``tests.serial``)."""
    if request.node.get_closest_marker("docker") is None:
        yield
        return
    from tests.serial import docker_turn

    with docker_turn(tmp_path_factory):
        yield


_ran_docker: list[str] = []


def pytest_runtest_setup(item):
    if item.get_closest_marker("docker"):
        _ran_docker.append(item.nodeid)


@pytest.fixture(scope="session", autouse=True)
def no_evoci_containers_left(tmp_path_factory):
    """After the whole suite, no container labelled by evoci may remain (when an engine runs).

    Checked by the process that ran Docker tests, in its turn: another may still be running one.
    """
    yield
    if _worker and not _ran_docker:
        return
    from tests.serial import docker_turn

    with docker_turn(tmp_path_factory):
        _check_no_containers()


def _check_no_containers() -> None:
    try:
        from evoci.sandbox.docker import connect

        client = connect()
    except Exception:  # no engine here: nothing can be left
        return
    left = client.containers.list(all=True, filters={"label": "evoci=1"})
    assert not left, f"containers left behind by the test suite: {[c.name for c in left]}"
