"""Session-wide set-up: a real Prefect server for the flow tests (started once)."""

from __future__ import annotations

import os

# Read by Prefect at import: quiet, and patient with a busy 2-core machine.
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def prefect_server():
    """A temporary Prefect server (SQLite) for this session; yields its API URL."""
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield PREFECT_API_URL.value()


@pytest.fixture(scope="session", autouse=True)
def no_evoci_containers_left():
    """After the whole suite, no container labelled by evoci may remain (when an engine runs)."""
    yield
    try:
        from evoci.sandbox.docker import connect

        client = connect()
    except Exception:  # no engine here: nothing can be left
        return
    left = client.containers.list(all=True, filters={"label": "evoci=1"})
    assert not left, f"containers left behind by the test suite: {[c.name for c in left]}"
