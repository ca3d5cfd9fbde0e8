"""The local sandbox: commands run on this machine, in the task's virtualenv.

What it isolates: the **environment** (the task's own virtualenv first on PATH, and an
allow-listed set of variables, so no API key or Prefect setting reaches the code under
test), **output** (each stream capped) and **time** (the whole process group is killed at
the timeout). What it does NOT isolate: the **network** and the **file system** — code
under test runs as the harness's user and can read or write anything that user can. Use
the docker sandbox (``SandboxConfig(kind="docker")``) for code you do not trust.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from evoci.sandbox.base import DEFAULT_OUTPUT_LIMIT, ExecResult, resolve_inside
from evoci.sandbox.environment import BuiltEnvironment
from evoci.sandbox.process import run_process
from evoci.sandbox.scrub import scrubbed_env


class LocalSandbox:
    """A workspace folder on this machine plus a built virtualenv (see the module docstring)."""

    def __init__(
        self,
        workspace: Path,
        environment: BuiltEnvironment,
        *,
        base_env: Mapping[str, str] | None = None,
    ):
        self._workspace = Path(workspace).resolve()
        self.environment = environment
        # The variables commands inherit before scrubbing; None = this process's environment.
        self._base_env = dict(base_env) if base_env is not None else None

    @property
    def workspace(self) -> Path:
        return self._workspace

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        timeout: float,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult:
        """Run ``cmd`` in the virtualenv with a scrubbed environment; ``env`` is added on top."""
        where = resolve_inside(self._workspace, cwd)
        return run_process(cmd, cwd=where, env=self._env(env), timeout=timeout, output_limit=output_limit)

    def read_file(self, path: str) -> bytes:
        return resolve_inside(self._workspace, path).read_bytes()

    def write_file(self, path: str, content: bytes | str) -> None:
        target = resolve_inside(self._workspace, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)

    def cleanup(self) -> None:
        """Nothing to release: every ``exec`` already killed the processes it started."""

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        base = scrubbed_env(self._base_env)
        path = os.pathsep.join(p for p in (str(self.environment.bin_dir), base.get("PATH", os.defpath)) if p)
        return {
            **base,
            "PATH": path,
            "VIRTUAL_ENV": str(self.environment.path),
            # The workspace is a git work tree evoci commits: keep __pycache__ out of it.
            "PYTHONDONTWRITEBYTECODE": "1",
            **(extra or {}),
        }
