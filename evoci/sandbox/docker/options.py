"""Settings of the Docker sandbox, read from ``SandboxConfig.options``."""

from __future__ import annotations

import os
import re
import ssl
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator

from evoci.sandbox.budget import DEFAULT_GROWTH_BYTES
from evoci.sandbox.docker.errors import InvalidDockerOptions

DEFAULT_BASE_IMAGE = "evoci/base:bookworm"
DEFAULT_CONCURRENCY_LIMIT_NAME = "evoci-docker"
_MEMORY = re.compile(r"^\d+[bkmg]?$", re.IGNORECASE)


class DockerOptions(BaseModel):
    """How the Docker sandbox builds images and runs containers. Every field has a default."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    base_image: str = Field(
        DEFAULT_BASE_IMAGE,
        description="Image every task image is built FROM (make it with `evoci images bootstrap`).",
    )
    image: str | None = Field(
        None,
        description="Use this prebuilt image as-is (e.g. one loaded from a `docker save` archive) instead of "
        "building one from the task's requirements.",
    )
    cpus: float = Field(2.0, gt=0, description="CPUs a container may use (fractions allowed).")
    memory: str = Field("2g", description="Memory limit of a container, e.g. '512m' or '2g'; swap is not allowed.")
    pids_limit: int = Field(512, ge=16, description="Most processes and threads a container may hold (fork bombs stop here).")
    tree_bytes: int = Field(4 * 1024**3, gt=0, description="Size of the tmpfs a test run's grading tree is copied into.")
    tmp_bytes: int = Field(1024**3, gt=0, description="Size of the tmpfs at /tmp (also HOME) in every container.")
    workspace_growth_bytes: int = Field(
        DEFAULT_GROWTH_BYTES, gt=0,
        description="How much a command may add to the bind-mounted workspace (an agent's): its disk usage when "
        "the command started plus this. Beyond it the container is killed (evoci.sandbox.budget).",
    )
    network: str = Field(
        "none",
        description="Network of agent and test containers: 'none', the only value (an agent reaches its model "
        "through evoci's model gateway). Image builds always have the network (pip needs it).",
    )
    ca_bundle: str | None = Field(
        default_factory=lambda: os.environ.get("EVOCI_CA_BUNDLE") or None,
        description="A CA bundle on the host to add to built images (sets PIP_CERT, SSL_CERT_FILE, "
        "REQUESTS_CA_BUNDLE); needed behind TLS-intercepting proxies. A path, or 'system' for the "
        "host's own bundle. Default: $EVOCI_CA_BUNDLE.",
    )
    image_budget_bytes: int | None = Field(
        None, gt=0, description="Keep evoci's task images under this many bytes, evicting the least recently used."
    )
    concurrency_limit_name: str | None = Field(
        DEFAULT_CONCURRENCY_LIMIT_NAME,
        description="Prefect global concurrency limit held (one slot) around each container inside a flow run; "
        "None holds none. A name other than the default must already exist.",
    )
    concurrency_limit: int = Field(
        2, ge=1, description="Slots of the default limit, which evoci creates or updates itself."
    )
    max_repairs: int = Field(3, ge=0, description="Most self-repair rounds (add a missing module, rebuild) per task.")
    docker_host: str | None = Field(
        None,
        validation_alias=AliasChoices("docker_host", "base_url"),
        description="Engine address, e.g. 'unix:///run/docker.sock'; default: $DOCKER_HOST or the local socket.",
    )

    @field_validator("network")
    @classmethod
    def _no_network(cls, value: str) -> str:
        if value != "none":
            raise ValueError(f"network {value!r} would let agent and test containers reach other hosts and the "
                             "host's own services; containers run with network 'none' and an agent reaches its model "
                             "through the gateway — drop the network option")
        return value

    @field_validator("memory")
    @classmethod
    def _memory_size(cls, value: str) -> str:
        if not _MEMORY.match(value.strip()):
            raise ValueError(f"memory {value!r} is not a size like '512m' or '2g'")
        return value.strip().lower()

    @classmethod
    def parse(cls, options: dict[str, Any] | None) -> "DockerOptions":
        """Validate ``options``; unknown keys and bad values raise ``InvalidDockerOptions`` naming the valid keys."""
        options = dict(options or {})
        valid = sorted(cls.model_fields)
        unknown = sorted(k for k in options if k not in valid and k != "base_url")
        if unknown:
            raise InvalidDockerOptions(
                f"unknown docker sandbox option(s) {', '.join(map(repr, unknown))} — choose from: {', '.join(valid)}"
            )
        try:
            return cls.model_validate(options)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise InvalidDockerOptions(f"bad docker sandbox option(s): {problems}") from exc

    @property
    def ca_bundle_path(self) -> Path | None:
        return resolve_ca_bundle(self.ca_bundle)

    @property
    def nano_cpus(self) -> int:
        return int(self.cpus * 1e9)


def resolve_ca_bundle(value: str | Path | None) -> Path | None:
    """A CA bundle path from a path or ``'system'`` (the bundle the host's OpenSSL trusts)."""
    if value is None or str(value) == "":
        return None
    if str(value) == "system":
        paths = ssl.get_default_verify_paths()
        for candidate in (paths.cafile, paths.openssl_cafile):
            if candidate and Path(candidate).is_file():
                return Path(candidate)
        raise InvalidDockerOptions("ca_bundle 'system': the host's OpenSSL names no CA bundle file; give a path")
    return Path(value).expanduser()
