"""The Docker sandbox: task images built offline, one container per command, nothing left behind.

    open_docker_sandbox(config, workspace, environment, paths) -> DockerSandbox

builds (or finds) the task image for ``environment`` FROM the base image
(``evoci images bootstrap`` makes it with no registry), then returns a sandbox whose every
``exec`` runs in a fresh, network-less, resource-limited container over the bind-mounted
workspace. See ``sandbox`` for what raises and what is returned as data, ``images`` for
caching and eviction, ``cleanup`` for ``prune``. Environment self-repair is sandbox-agnostic:
``evoci.sandbox.repair``.

This package and ``evoci.sandbox.process`` are the only code that talks to Docker or
starts processes.
"""

from __future__ import annotations

from pathlib import Path

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox.base import WORKSPACE, Layout
from evoci.sandbox.docker.bootstrap import bootstrap_base_image
from evoci.sandbox.docker.cleanup import install_signal_cleanup, prune
from evoci.sandbox.docker.client import connect
from evoci.sandbox.docker.concurrency import ensure_concurrency_limit, ensure_once, in_prefect_run
from evoci.sandbox.docker.errors import ContainerError, DockerUnavailable, ImageMissing, InvalidDockerOptions
from evoci.sandbox.docker.images import EnvironmentImage, ImageInfo, ImageStore
from evoci.sandbox.docker.options import DEFAULT_CONCURRENCY_LIMIT_NAME, DockerOptions
from evoci.sandbox.docker.sandbox import DockerSandbox
from evoci.settings import Paths

__all__ = [
    "ContainerError",
    "DockerOptions",
    "DockerSandbox",
    "DockerUnavailable",
    "EnvironmentImage",
    "ImageInfo",
    "ImageMissing",
    "ImageStore",
    "InvalidDockerOptions",
    "bootstrap_base_image",
    "connect",
    "ensure_concurrency_limit",
    "install_signal_cleanup",
    "open_docker_sandbox",
    "prune",
]


def open_docker_sandbox(
    config: SandboxConfig,
    workspace: Path,
    environment: EnvironmentSpec,
    paths: Paths,
    *,
    run_id: str | None = None,
    task_id: str | None = None,
    ephemeral: bool = False,
    shared: dict[str, Path] | None = None,
    layout: Layout = WORKSPACE,
) -> DockerSandbox:
    """A ready Docker sandbox over ``workspace``, its image built for ``environment`` (or found).

    Raises ``InvalidDockerOptions`` for bad options, ``DockerUnavailable``, ``ImageMissing`` or
    ``EnvironmentBuildError`` when the engine or the image is not there. ``run_id`` and
    ``task_id`` label the containers; by default they are read from a workspace under
    ``paths.home/runs/<run id>/<task id>/``.
    """
    options = DockerOptions.parse(config.options)
    client = connect(options.docker_host)
    store = ImageStore(client, paths, options)
    if options.image:
        store.require(options.image)
        image = options.image
    elif environment.image_archive and environment.image_digest:
        image = store.ensure_archive(environment.image_archive, environment.image_digest)
    else:
        image = store.ensure(environment).tag
    if options.concurrency_limit_name == DEFAULT_CONCURRENCY_LIMIT_NAME and in_prefect_run():
        ensure_once(options.concurrency_limit_name, options.concurrency_limit)
    install_signal_cleanup()
    labels = _run_labels(Path(workspace), paths, run_id, task_id)
    return DockerSandbox(client, image, Path(workspace), options, labels=labels, ephemeral=ephemeral,
                         shared=shared, layout=layout)


def _run_labels(workspace: Path, paths: Paths, run_id: str | None, task_id: str | None) -> dict[str, str]:
    if run_id is None or task_id is None:
        try:
            parts = workspace.absolute().relative_to((paths.home / "runs").absolute()).parts
        except ValueError:
            parts = ()
        if len(parts) >= 2:
            run_id, task_id = run_id or parts[0], task_id or parts[1]
    labels = {"evoci.run_id": run_id, "evoci.task_id": task_id}
    return {k: v for k, v in labels.items() if v}
