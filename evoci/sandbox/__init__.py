"""Sandboxes: where agents' commands and test runs execute (see ``base`` for the interface).

``open_sandbox`` picks the implementation named by ``SandboxConfig.kind``: ``local`` (a
virtualenv under bubblewrap), ``docker`` (a container per command) or ``host`` (a virtualenv with
no isolation: an explicit opt-in for trusted agents). The docker sandbox is imported only when
asked for, so the local one works without the docker SDK.

``ephemeral=True`` (the test node) gives commands a private copy of the root: what the code under
test writes never reaches the host. No sandbox has a network: an agent that needs its model gets
the model gateway for one command (``exec(..., gateway=endpoint)``, see ``evoci.gateway``).

``shared`` shows host folders read-only at paths inside the root (``{"third_party": folder}``):
large, harness-owned inputs a grading tree needs (a NITR checkout's vendored GoogleTest) are
mounted instead of copied into every tree, and no command can change them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.errors import InputError
from evoci.sandbox import bwrap
from evoci.sandbox.base import DEFAULT_OUTPUT_LIMIT, WORKSPACE, ExecResult, Layout, Sandbox, resolve_inside
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

Opener = Callable[..., Sandbox]
UNAVAILABLE_HINT = ("use --sandbox docker, or install bubblewrap (Debian: apt-get install bubblewrap); "
                    "--sandbox host runs without isolation and is only for agents you trust")


def _open_local(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths,
                *, ephemeral: bool, shared: dict[str, Path], layout: Layout) -> Sandbox:
    reason = bwrap.available()
    if reason:
        raise InputError(f"the local sandbox cannot isolate commands: {reason} — {UNAVAILABLE_HINT}")
    if "agent_network" in config.options:
        raise InputError("the local sandbox option agent_network is gone: an agent sandbox has no network, and an "
                         "agent reaches its model through evoci's model gateway — give the agent a 'gateway' option "
                         "(see docs/agents.md, 'The model gateway') and drop agent_network")
    try:
        options = bwrap.BwrapOptions(**config.options)
    except ValidationError as exc:
        names = ", ".join(bwrap.BwrapOptions.model_fields)
        raise InputError(f"bad local sandbox option: {exc.errors()[0]['loc']} {exc.errors()[0]['msg']} — "
                         f"the options are: {names}") from None
    return LocalSandbox(workspace, LocalEnvironments(paths.envs).ensure(environment), isolation=options,
                        ephemeral=ephemeral, shared=shared, layout=layout)


def _open_host(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths,
               *, ephemeral: bool, shared: dict[str, Path], layout: Layout) -> Sandbox:
    return LocalSandbox(workspace, LocalEnvironments(paths.envs).ensure(environment), shared=shared, layout=layout)


def _open_docker(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths,
                 *, ephemeral: bool, shared: dict[str, Path], layout: Layout) -> Sandbox:
    from evoci.sandbox.docker import open_docker_sandbox

    return open_docker_sandbox(config, workspace, environment, paths, ephemeral=ephemeral, shared=shared, layout=layout)


SANDBOXES: dict[str, Opener] = {"docker": _open_docker, "host": _open_host, "local": _open_local}


def open_sandbox(config: SandboxConfig, workspace: Path, environment: EnvironmentSpec, paths: Paths,
                 *, ephemeral: bool = False, shared: Mapping[str, Path] | None = None,
                 layout: Layout = WORKSPACE) -> Sandbox:
    """A ready sandbox of ``config.kind`` over ``workspace``, with ``environment`` built or reused.

    ``layout``: where commands see the root and as whom they run (``evoci.sandbox.base.Layout``)."""
    shares = check_shared(shared or {}, ephemeral)
    try:
        opener = SANDBOXES[config.kind]
    except KeyError:
        raise ValueError(f"unknown sandbox {config.kind!r} — choose one of: {', '.join(sorted(SANDBOXES))}") from None
    return opener(config, workspace, environment, paths, ephemeral=ephemeral, shared=shares, layout=layout)


def check_shared(shared: Mapping[str, Path], ephemeral: bool) -> dict[str, Path]:
    """``shared`` with each place a plain relative path and each folder absolute (a harness error otherwise)."""
    if shared and ephemeral:
        raise ValueError("shared folders are for a tree the harness built, not an ephemeral copy")
    checked = {}
    for rel, folder in shared.items():
        place = PurePosixPath(rel)
        if place.is_absolute() or ".." in place.parts or not place.parts or not Path(folder).is_dir():
            raise ValueError(f"shared folder {folder} at {rel!r}: need a relative place and an existing folder")
        checked[place.as_posix()] = Path(folder).resolve()
    return checked
