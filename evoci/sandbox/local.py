"""The local sandbox: commands run on this machine, in the task's virtualenv, under bubblewrap.

Isolated (the default, ``SandboxConfig(kind="local")``): every command runs through
``evoci.sandbox.bwrap`` — its own PID and network namespaces, a read-only system, only the
sandbox root writable (at ``/workspace``), a fresh tmpfs ``HOME`` and ``/tmp``, resource limits.
The oracle checkout, other runs, evoci's home and the user's home do not exist in there.

Not isolated (``kind="host"``, an explicit opt-in recorded in the run's config): commands run as
the harness's user on the host file system and network, with only the environment scrubbed,
output capped and the process group killed at the timeout. Fit for trusted agents (the human
replay) on machines without bubblewrap; never for code you do not trust.

In both modes the environment is built from an allow-list (``scrub``): no API key or Prefect
setting reaches the code under test.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from evoci.errors import SandboxError
from evoci.sandbox import bwrap
from evoci.sandbox.base import (DEFAULT_OUTPUT_LIMIT, REPORT_DIR, WORKSPACE, ExecResult, Layout, read_inside, resolve_inside,
                                write_inside)
from evoci.sandbox.budget import DEFAULT_GROWTH_BYTES, DiskWatch, ceiling_of
from evoci.sandbox.environment import BuiltEnvironment
from evoci.sandbox.process import run_process
from evoci.sandbox.scrub import scrubbed_env

if TYPE_CHECKING:
    from evoci.gateway.endpoint import GatewayEndpoint

# Harness variables that describe the host, not the sandbox: bubblewrap sets its own.
_HOST_ONLY = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TEMP", "TMP"})
_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"


class LocalSandbox:
    """A folder on this machine plus a built virtualenv (see the module docstring)."""

    @property
    def user_namespaces(self) -> bool:
        """Whether a command can start a sandbox of its own inside (a CLI's: Codex's). Under a harness
        run as root the command is uid 0 without any capability (``bwrap.command``'s ``--cap-drop``),
        where a nested bubblewrap takes itself for privileged and fails; the CLI then runs without
        its own sandbox, as in a Docker container: evoci's is the sandbox."""
        return os.geteuid() != 0

    def __init__(
        self,
        workspace: Path,
        environment: BuiltEnvironment,
        *,
        base_env: Mapping[str, str] | None = None,
        isolation: bwrap.BwrapOptions | None = None,
        ephemeral: bool = False,
        shared: Mapping[str, Path] | None = None,
        layout: Layout = WORKSPACE,
    ):
        self.layout = layout  # isolated only: where the root is seen and as whom commands run
        self._workspace = Path(workspace).resolve()
        self.environment = environment
        # The variables commands inherit before scrubbing; None = this process's environment.
        self._base_env = dict(base_env) if base_env is not None else None
        self.isolation = isolation
        self.ephemeral = ephemeral  # isolated only: what commands write never reaches the host
        self._shared = dict(shared or {})  # place in the workspace -> host folder, read-only
        self.growth = isolation.workspace_growth_bytes if isolation else DEFAULT_GROWTH_BYTES
        self.budget_overrun: int | None = None  # the growth a command went over (``evoci.sandbox.budget``)
        self._last_watch: DiskWatch | None = None
        if self.isolation is None:
            self._link_shared()

    @property
    def workspace(self) -> Path:
        return self._workspace

    @property
    def report_dir(self) -> str:
        return REPORT_DIR if self.isolation and self.ephemeral else tempfile.gettempdir()

    @property
    def visible_root(self) -> str:
        """Where commands see the workspace: ``layout.root`` (/workspace) when isolated, its host path otherwise."""
        return self.layout.root if self.isolation else str(self._workspace)

    @property
    def tree_capacity(self) -> int | None:
        return ceiling_of(self.isolation.tree_bytes) if self.isolation and self.ephemeral else None

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        timeout: float,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        gateway: GatewayEndpoint | None = None,
        installs: tuple[str, ...] = (),
    ) -> ExecResult:
        """Run ``cmd`` in the virtualenv with a scrubbed environment; ``env`` is added on top.

        ``gateway``: serve the model gateway into the command (its only way out; isolated only).
        ``installs``: installation folders visible read-only at their own paths for this command
        (an agent CLI from evoci's tools folder: exactly that installation)."""
        where = resolve_inside(self._workspace, cwd)
        if self.isolation is None:
            if gateway is not None:
                raise SandboxError("the model gateway needs an isolated sandbox (local or docker), not host")
            return self._noted(run_process(cmd, cwd=where, env=self._host_env(env), timeout=timeout,
                                           output_limit=output_limit, budget=self._watch()))
        sandbox_env = self._isolated_env(env)
        for path in (*self.isolation.ro_paths, *installs):
            bwrap.refuse_install(Path(path), self._workspace)
        visible = [self.environment.path, *bwrap.venv_base(self.environment.path),
                   *map(Path, self.isolation.ro_paths), *map(Path, installs)]  # fmt: skip
        for install in installs:  # a virtualenv's interpreter lives in its base installation
            visible += bwrap.venv_base(Path(install))
        if cmd:
            visible += bwrap.read_only_for(cmd[0], sandbox_env["PATH"], workspace=self._workspace,
                                           installs=(*map(str, visible),))
        argv = bwrap.command(
            cmd, root=self._workspace, cwd=str(where.relative_to(self._workspace)), env=sandbox_env,
            read_only=visible, options=self.isolation, ephemeral=self.ephemeral,
            gateway_dir=gateway.host_dir if gateway else None, shared=self._shared, layout=self.layout,
        )
        with bwrap.pids_cgroup(self.isolation.pids) as prefix:
            return self._noted(run_process([*prefix, *argv], cwd=self._workspace, env={"PATH": _SYSTEM_PATH},
                                           timeout=timeout, output_limit=output_limit, budget=self._watch()))

    def _watch(self) -> DiskWatch | None:
        """A watch on the workspace's size, unless nothing a command writes reaches it (ephemeral)."""
        if self.isolation and self.ephemeral:
            return None
        ceiling = ceiling_of(self.isolation.tree_bytes) if self.isolation else None  # what a test run can hold
        self._last_watch = DiskWatch(self._workspace, self.growth, ceiling)
        return self._last_watch

    def _noted(self, result: ExecResult) -> ExecResult:
        if result.over_budget:
            self.budget_overrun = self._last_watch.allowance if self._last_watch else self.growth
        return result

    def _link_shared(self) -> None:
        """No isolation, no mounts: each shared place becomes a link to its folder (the host sandbox
        runs only agents the user trusts, and nothing is read-only there)."""
        for place, folder in self._shared.items():
            target = self._workspace / place
            if target.is_dir() and not target.is_symlink():
                target.rmdir()  # the empty mount point the tree was built with
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.is_symlink():
                target.symlink_to(folder, target_is_directory=True)

    def read_file(self, path: str) -> bytes:
        return read_inside(self._workspace, path)

    def write_file(self, path: str, content: bytes | str) -> None:
        write_inside(self._workspace, path, content)

    def cleanup(self) -> None:
        """Nothing to release: every ``exec`` already killed the processes it started."""

    def _host_env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        base = scrubbed_env(self._base_env)
        path = os.pathsep.join(p for p in (str(self.environment.bin_dir), base.get("PATH", os.defpath)) if p)
        return {**base, "PATH": path, **self._common(), **(extra or {})}

    def _isolated_env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        base = {k: v for k, v in scrubbed_env(self._base_env).items() if k not in _HOST_ONLY}
        user = "root" if self.layout.as_root else "evoci"
        return {
            **base,
            "PATH": f"{self.environment.bin_dir}:{_SYSTEM_PATH}",
            "HOME": bwrap.sandbox_home(self.layout),
            "TMPDIR": "/tmp",
            # getpass.getuser() reads these first: they name the sandbox's user, not the harness's
            "USER": user,
            "LOGNAME": user,
            **self._common(),
            **(extra or {}),
        }

    def _common(self) -> dict[str, str]:
        return {
            "VIRTUAL_ENV": str(self.environment.path),
            # The workspace is a git work tree evoci commits: keep __pycache__ out of it.
            "PYTHONDONTWRITEBYTECODE": "1",
        }
