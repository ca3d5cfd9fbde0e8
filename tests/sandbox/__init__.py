"""Shared helpers for sandbox tests: one real virtualenv per test session, throwaway codebases.

The environment fixture is imported by the modules that need it; every import resolves to
the same folder under the session's base temp dir, so it is built once and then reused.
"""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from evoci.sandbox import BuiltEnvironment, LocalEnvironments, resolve_environment


def evoci_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp() / "evoci-home"


@pytest.fixture(scope="session")
def built_env(tmp_path_factory: pytest.TempPathFactory) -> BuiltEnvironment:
    """A real virtualenv with only pytest and pytest-json-report (built once per session)."""
    return LocalEnvironments(evoci_home(tmp_path_factory) / "envs").ensure(resolve_environment({}))


def make_codebase(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path → source, dedented) under ``root``; return ``root``."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return root


def process_gone(pid: int, wait_s: float = 3.0) -> bool:
    """True once ``pid`` no longer runs (absent, or a zombie nobody has reaped yet)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def kill_if_alive(pid: int) -> None:
    """Clean up after a failed assertion, so a broken kill does not leak a process."""
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
