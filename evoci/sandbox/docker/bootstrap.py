"""Build evoci's base image with no registry: debootstrap → docker import → one Dockerfile.

    python -m evoci.sandbox.docker.bootstrap [--name evoci/base:bookworm] [--ca-bundle PATH|system] [--rebuild]

Steps (each skipped when its image exists, unless ``rebuild``):

1. ``debootstrap --variant=minbase <suite> <tmp>/rootfs`` (Debian's package repositories; root needed);
2. ``tar -C rootfs -c .`` imported as ``evoci/rootfs:<suite>``;
3. ``FROM evoci/rootfs:<suite>``: apt-get install python3 python3-venv python3-pip git
   ca-certificates; a virtualenv at ``/opt/evoci-venv`` with pytest and pytest-json-report,
   first on ``PATH``; optionally the host's CA bundle (pip needs it behind TLS-intercepting proxies).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker
import docker.errors

from evoci.errors import EnvironmentBuildError, EvociError
from evoci.sandbox.docker.client import connect
from evoci.sandbox.docker.build import LABEL, ROLE, build_image, ca_dockerfile_lines, read_ca_bundle
from evoci.sandbox.docker.options import DEFAULT_BASE_IMAGE, resolve_ca_bundle

log = logging.getLogger(__name__)

VENV = "/opt/evoci-venv"
APT_PACKAGES = ("python3", "python3-venv", "python3-pip", "git", "ca-certificates")
PIP_PACKAGES = ("pytest>=8", "pytest-json-report>=1.5")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def base_dockerfile(rootfs: str, *, with_ca: bool) -> str:
    """The Dockerfile that turns a bare Debian root file system into evoci's base image."""
    lines = [
        f"FROM {rootfs}",
        f"ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PATH={SYSTEM_PATH}",
        *(ca_dockerfile_lines() if with_ca else []),
        "RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends "
        + " ".join(APT_PACKAGES)
        + " && rm -rf /var/lib/apt/lists/*",
        f"RUN python3 -m venv {VENV} && {VENV}/bin/pip install --no-cache-dir --disable-pip-version-check "
        + " ".join(f"'{p}'" for p in PIP_PACKAGES),
        f"ENV VIRTUAL_ENV={VENV} PATH={VENV}/bin:{SYSTEM_PATH}",
        "WORKDIR /workspace",
    ]
    return "\n".join(lines) + "\n"


def bootstrap_base_image(
    name: str = DEFAULT_BASE_IMAGE,
    *,
    suite: str = "bookworm",
    ca_bundle: str | Path | None = None,
    rebuild: bool = False,
    mirror: str | None = None,
    client: docker.DockerClient | None = None,
) -> str:
    """Make sure image ``name`` exists (build it offline if not); its id. Idempotent."""
    client = client or connect()
    started = time.monotonic()
    if not rebuild and (existing := _find(client, name)) is not None:
        log.info("base image %s exists (%s); nothing to do", name, existing.short_id)
        return existing.id

    rootfs = f"evoci/rootfs:{suite}"
    if rebuild or _find(client, rootfs) is None:
        _import_rootfs(client, rootfs, suite=suite, mirror=mirror)
    else:
        log.info("root file system image %s exists", rootfs)

    step = time.monotonic()
    ca = read_ca_bundle(resolve_ca_bundle(ca_bundle))
    log.info("building %s FROM %s (apt + venv + pytest%s)", name, rootfs, ", with CA bundle" if ca else "")
    image_id = build_image(
        client,
        base_dockerfile(rootfs, with_ca=ca is not None),
        {"ca-bundle.crt": ca} if ca else {},
        tag=name,
        labels={LABEL: "1", ROLE: "base"},
        what="the base image",
    )
    log.info("built %s in %.0fs (total %.0fs)", name, time.monotonic() - step, time.monotonic() - started)
    return image_id


def _import_rootfs(client: docker.DockerClient, rootfs: str, *, suite: str, mirror: str | None) -> None:
    if shutil.which("debootstrap") is None:
        raise EnvironmentBuildError("debootstrap is not installed — apt-get install debootstrap (scripts/docker-up.sh does)")
    if os.geteuid() != 0:
        raise EnvironmentBuildError("debootstrap needs root — run `evoci images bootstrap` as root (or with sudo)")
    with tempfile.TemporaryDirectory(prefix="evoci-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        step = time.monotonic()
        log.info("debootstrap --variant=minbase %s (takes about a minute)", suite)
        _run(["debootstrap", "--variant=minbase", suite, str(root), *([mirror] if mirror else [])], "debootstrap")
        log.info("debootstrap done in %.0fs", time.monotonic() - step)

        step = time.monotonic()
        archive = Path(tmp) / "rootfs.tar"
        _run(["tar", "-C", str(root), "--numeric-owner", "-cf", str(archive), "."], "tar")
        repository, tag = rootfs.rsplit(":", 1)
        try:
            client.api.import_image_from_file(
                str(archive), repository=repository, tag=tag, changes=[f"LABEL {LABEL}=1 {ROLE}=rootfs"]
            )
        except docker.errors.APIError as exc:
            raise EnvironmentBuildError(f"docker import of the root file system failed: {exc.explanation}") from exc
        log.info("imported %s in %.0fs (%.0f MB)", rootfs, time.monotonic() - step, archive.stat().st_size / 1e6)


def _run(cmd: list[str], what: str) -> None:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    if proc.returncode != 0:
        tail = "\n".join(proc.stdout.splitlines()[-30:])
        raise EnvironmentBuildError(f"{what} failed (exit {proc.returncode}):\n{tail}\ncheck the apt repositories are reachable, then run again")


def _find(client: docker.DockerClient, ref: str):
    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``evoci images bootstrap`` (shared with ``python -m``)."""
    parser.add_argument("--name", default=DEFAULT_BASE_IMAGE, help="tag of the base image (default: %(default)s)")
    parser.add_argument("--suite", default="bookworm", help="Debian suite (default: %(default)s)")
    parser.add_argument(
        "--ca-bundle",
        default=os.environ.get("EVOCI_CA_BUNDLE") or None,
        metavar="PATH",
        help="CA bundle to add to the image (a path, or 'system' for the host's); default: $EVOCI_CA_BUNDLE",
    )
    parser.add_argument("--mirror", default=None, help="Debian mirror for debootstrap (default: debootstrap's)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild even if the image exists")


def run(args: argparse.Namespace) -> int:
    """Run ``images bootstrap`` from parsed arguments; 0 on success, 1 with a one-line error."""
    try:
        image_id = bootstrap_base_image(
            args.name, suite=args.suite, ca_bundle=args.ca_bundle, rebuild=args.rebuild, mirror=args.mirror
        )
    except EvociError as exc:
        print(f"evoci: error: {exc}", file=sys.stderr)
        return 1
    print(f"{args.name} {image_id}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evoci.sandbox.docker.bootstrap", description=__doc__.splitlines()[0])
    add_arguments(parser)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
