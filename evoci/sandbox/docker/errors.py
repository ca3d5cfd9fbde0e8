"""Errors of the Docker sandbox, and the one place Docker's own exceptions are translated.

    SandboxError (evoci.errors; an InfrastructureError, so Prefect retries it)
     ├── DockerUnavailable ...... the engine cannot be reached (no daemon, bad socket)
     ├── ImageMissing ........... an image the sandbox needs is not in the engine
     ├── ContainerError ......... a container could not be created, started or waited on
     └── EnvironmentBuildError .. (evoci.errors) a task image could not be built
    InputError (evoci.errors)
     └── InvalidDockerOptions ... a sandbox option key or value is wrong

What a command does inside a running container (a non-zero exit, a timeout, the engine's
OOM killer) is never one of these: it comes back as an ``ExecResult``.
"""

from __future__ import annotations

from evoci.errors import InputError, SandboxError

START_HINT = "start the engine (scripts/docker-up.sh, or dockerd) or pass --sandbox local"


class DockerUnavailable(SandboxError):
    """The Docker engine did not answer."""


class ImageMissing(SandboxError):
    """An image the sandbox needs is not present in the engine (nothing is ever pulled)."""


class ContainerError(SandboxError):
    """The engine refused to create, start, wait on or inspect a container."""


class InvalidDockerOptions(InputError, ValueError):
    """``SandboxConfig.options`` holds an unknown key or a bad value for the Docker sandbox."""
