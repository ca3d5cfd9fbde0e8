"""One Docker test at a time across the suite's worker processes (an exclusive file lock).

The Docker engine, its containers and the image store are shared by every worker, and the
Docker tests check that no evoci container is left: they must not see each other's.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def docker_turn(factory: pytest.TempPathFactory) -> Iterator[None]:
    """Hold the suite-wide Docker lock (beside every worker's temporary folder) while inside."""
    lock = Path(factory.getbasetemp()).parent / "evoci-docker-tests.lock"
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
