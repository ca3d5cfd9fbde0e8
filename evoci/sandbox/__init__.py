"""Sandboxes: where agents' commands and test runs execute (see ``base`` for the interface).

``open_sandbox`` picks the implementation named by ``SandboxConfig.kind``. The docker
sandbox is imported only when asked for, so the local one works without the docker SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox.base import DEFAULT_OUTPUT_LIMIT, ExecResult, Sandbox, resolve_inside
from evoci.sandbox.environment import BuiltEnvironment, LocalEnvironments, resolve_environment
from evoci.sandbox.local import LocalSandbox
from evoci.sandbox.process import run_process
from evoci.sandbox.scrub import looks_secret, scrubbed_env
from evoci.settings import Paths

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "BuiltEnvironment",
    "ExecResult",
    "LocalEnvironments",
    "LocalSandbox",
    "Sandbox",
    "looks_secret",
    "open_sandbox",
    "resolve_environment",
    "resolve_inside",
    "run_process",
    "scrubbed_env",
]

Opener = Callable[[SandboxConfig, Path, EnvironmentSpec, Paths], Sandbox]


def _open_local(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths) -> Sandbox:
    return LocalSandbox(workspace, LocalEnvironments(paths.envs).ensure(environment))


def _open_docker(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths) -> Sandbox:
    from evoci.sandbox.docker import open_docker_sandbox

    return open_docker_sandbox(config, workspace, environment, paths)


SANDBOXES: dict[str, Opener] = {"docker": _open_docker, "local": _open_local}


def open_sandbox(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths) -> Sandbox:
    """A ready sandbox of ``config.kind`` over ``workspace``, with ``environment`` built or reused."""
    try:
        opener = SANDBOXES[config.kind]
    except KeyError:
        raise ValueError(f"unknown sandbox {config.kind!r} — choose one of: {', '.join(sorted(SANDBOXES))}") from None
    return opener(config, workspace, environment, paths)
