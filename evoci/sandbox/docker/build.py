"""Building an image from a generated Dockerfile, with the host's CA bundle when asked.

The only place ``docker build`` is called (task images and the base image). Builds have
the network — pip and apt need it — and stream their log to this module's logger; a failed
build raises ``EnvironmentBuildError`` with the log's tail and what to do.
"""

from __future__ import annotations

import io
import logging
import tarfile
from pathlib import Path

import docker
import docker.errors
import requests

from evoci.errors import EnvironmentBuildError
from evoci.sandbox.docker.errors import START_HINT, DockerUnavailable, ImageMissing

log = logging.getLogger(__name__)

LABEL = "evoci"
ROLE = "evoci.role"
CA_IN_IMAGE = "/usr/local/share/evoci/ca-bundle.crt"
CA_ENV = ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "GIT_SSL_CAINFO")
BUILD_TIMEOUT_S = 3600
LOG_TAIL_LINES = 40


def ca_dockerfile_lines() -> list[str]:
    """Dockerfile lines that install ``ca-bundle.crt`` from the build context and point TLS clients at it."""
    env = " ".join(f"{name}={CA_IN_IMAGE}" for name in CA_ENV)
    return [f"COPY ca-bundle.crt {CA_IN_IMAGE}", f"ENV {env}"]


def build_image(
    client: docker.DockerClient,
    dockerfile: str,
    files: dict[str, bytes],
    *,
    tag: str,
    labels: dict[str, str],
    what: str,
) -> str:
    """Build ``dockerfile`` with ``files`` as its context; the new image's id. Streams the log to ``log``."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for name, data in {"Dockerfile": dockerfile.encode(), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0  # identical contexts hit the engine's layer cache
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    lines: list[str] = []
    try:
        stream = client.api.build(
            fileobj=context, custom_context=True, tag=tag, labels=labels, rm=True, forcerm=True,
            pull=False, decode=True, timeout=BUILD_TIMEOUT_S,
        )
        for chunk in stream:
            if "stream" in chunk:
                for line in chunk["stream"].splitlines():
                    if line.strip():
                        lines.append(line)
                        log.debug("build %s: %s", tag, line)
            if "error" in chunk:
                lines.append(chunk["error"].strip())
                raise EnvironmentBuildError(
                    f"building {what} ({tag}) failed: {chunk['error'].strip()}\n"
                    + "\n".join(lines[-LOG_TAIL_LINES:])
                    + "\nfix the requirement named above (or the base image), then run again; "
                    "behind a TLS-intercepting proxy set the sandbox option ca_bundle"
                )
    except docker.errors.ImageNotFound as exc:
        raise ImageMissing(f"building {what}: {exc.explanation}; run `evoci images bootstrap`") from exc
    except (docker.errors.APIError, docker.errors.BuildError) as exc:
        raise EnvironmentBuildError(f"building {what} ({tag}) failed: {exc}\n" + "\n".join(lines[-LOG_TAIL_LINES:])) from exc
    except requests.exceptions.ConnectionError as exc:
        raise DockerUnavailable(f"lost the Docker engine while building {what}: {exc}; {START_HINT}") from exc
    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound as exc:
        raise EnvironmentBuildError(f"building {what} reported success but {tag} is missing; build again") from exc


def read_ca_bundle(path: Path | None) -> bytes | None:
    """The bytes of a CA bundle file, or None; an unreadable file is a build error saying so."""
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError as exc:
        raise EnvironmentBuildError(f"cannot read the CA bundle {path}: {exc.strerror}; fix the ca_bundle option") from exc
