"""evoci's C++ image, built offline on top of the base image: cmake, g++, make and GoogleTest.

    FROM evoci/base:bookworm  +  apt-get install cmake g++ make libgtest-dev

Debian's packages come from its repositories (reachable at build time, like the base
image's); nothing is pulled from a registry. ``find_package(GTest)`` works with
libgtest-dev. The NITR flow uses this image for C++ probes in the Docker sandbox unless the
sandbox options name a ``base_image`` or ``image`` of their own.
"""

from __future__ import annotations

import logging
import time

import docker

from evoci.sandbox.docker.bootstrap import _find, bootstrap_base_image
from evoci.sandbox.docker.build import LABEL, ROLE, build_image
from evoci.sandbox.docker.client import connect
from evoci.sandbox.docker.options import DEFAULT_BASE_IMAGE

log = logging.getLogger(__name__)

CPP_IMAGE = "evoci/base-cpp:bookworm"
CPP_PACKAGES = ("cmake", "g++", "make", "libgtest-dev")


def cpp_dockerfile(base: str) -> str:
    return "\n".join([
        f"FROM {base}",
        "RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends "
        + " ".join(CPP_PACKAGES) + " && rm -rf /var/lib/apt/lists/*",
    ]) + "\n"


def bootstrap_cpp_image(name: str = CPP_IMAGE, *, base: str = DEFAULT_BASE_IMAGE,
                        client: docker.DockerClient | None = None) -> str:
    """Make sure image ``name`` exists (the base image first, then the C++ layer); its id. Idempotent."""
    client = client or connect()
    if (existing := _find(client, name)) is not None:
        return existing.id
    bootstrap_base_image(base, client=client)
    started = time.monotonic()
    log.info("building %s FROM %s (%s)", name, base, ", ".join(CPP_PACKAGES))
    image_id = build_image(client, cpp_dockerfile(base), {}, tag=name, labels={LABEL: "1", ROLE: "base"},
                           what="the C++ image")
    log.info("built %s in %.0fs", name, time.monotonic() - started)
    return image_id
