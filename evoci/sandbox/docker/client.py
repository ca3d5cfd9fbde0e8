"""Connecting to the Docker engine, with failures translated to ``DockerUnavailable``."""

from __future__ import annotations

import docker
import docker.errors
import requests

from evoci.sandbox.docker.errors import START_HINT, DockerUnavailable

# API calls other than `wait` and `build` streams should answer well within this.
API_TIMEOUT_S = 120


def connect(docker_host: str | None = None) -> docker.DockerClient:
    """A client for ``docker_host`` (default: ``DOCKER_HOST`` or the local socket), pinged once."""
    where = docker_host or "the default socket (DOCKER_HOST)"
    try:
        if docker_host:
            client = docker.DockerClient(base_url=docker_host, timeout=API_TIMEOUT_S)
        else:
            client = docker.from_env(timeout=API_TIMEOUT_S)
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException, OSError) as exc:
        raise DockerUnavailable(f"cannot reach the Docker engine at {where} ({_first_line(exc)}); {START_HINT}") from exc
    return client


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
