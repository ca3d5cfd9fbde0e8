"""Task images: built once per environment, found again by tag, evicted least-recently-used.

A task image is ``FROM <base image>`` plus ``pip install`` of the task's requirements into the
base image's virtualenv. Its tag is ``evoci/env:<environment hash>-<hash of base image id and
CA bundle>``, so an unchanged environment on an unchanged base is found with one
``images.get`` and never rebuilt. Builds use the network (pip); test runs never do.

Every image evoci makes carries the label ``evoci=1`` and a role (``evoci.role`` = rootfs, base
or env). Last-use times live in a small JSON index under ``<home>/docker/images.json``
(image labels cannot change after a build).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import docker
import docker.errors
import requests

from evoci.domain import EnvironmentSpec, stable_hash
from evoci.sandbox.docker.build import LABEL, ROLE, build_image, ca_dockerfile_lines, read_ca_bundle
from evoci.sandbox.docker.errors import START_HINT, ContainerError, DockerUnavailable, ImageMissing
from evoci.sandbox.docker.options import DockerOptions
from evoci.settings import Paths

log = logging.getLogger(__name__)

ENV_REPOSITORY = "evoci/env"
# Images loaded from a task's `docker save` archive, tagged by the archive's SHA-256.
RELEASE_REPOSITORY = "evoci/release"

_build_locks: dict[str, threading.Lock] = {}
_build_locks_guard = threading.Lock()


@dataclass(frozen=True)
class EnvironmentImage:
    """A task image ready to run. ``built`` is False when it was found in the engine."""

    tag: str
    image_id: str
    built: bool
    seconds: float


@dataclass(frozen=True)
class ImageInfo:
    """One of evoci's images, as ``evoci images list`` shows it."""

    tags: tuple[str, ...]
    image_id: str
    role: str
    size_bytes: int
    last_used: float | None


class ImageStore:
    """evoci's images in one engine: build or find task images, load archives, evict the least recently used."""

    def __init__(self, client: docker.DockerClient, paths: Paths, options: DockerOptions):
        self.client = client
        self.options = options
        self.index_path = paths.home / "docker" / "images.json"

    # -- task images -------------------------------------------------------------------------

    def base_image_id(self) -> str:
        """The id of the configured base image; ``ImageMissing`` says how to make it."""
        return self._get(self.options.base_image, "run `evoci images bootstrap` (nothing can be pulled)").id

    def environment_tag(self, spec: EnvironmentSpec) -> str:
        """The tag of ``spec``'s image: environment hash + hash of (base image id, CA bundle content)."""
        ca = self._ca_bytes()
        salt = stable_hash({"base": self.base_image_id(), "ca": stable_hash(ca.decode("latin-1")) if ca else None}, 12)
        return f"{ENV_REPOSITORY}:{spec.content_hash}-{salt}"

    def ensure(self, spec: EnvironmentSpec) -> EnvironmentImage:
        """The image for ``spec``: found by tag, or built now (once per tag, even across threads)."""
        start = time.monotonic()
        tag = self.environment_tag(spec)
        with _lock_for(tag):
            image = self._find(tag)
            if image is not None:
                self.touch(tag)
                return EnvironmentImage(tag, image.id, built=False, seconds=time.monotonic() - start)
            if spec.python:
                log.warning("environment %s asks for Python %s; the base image's Python is used", tag, spec.python)
            files = {"requirements.txt": ("\n".join(spec.requirements) + "\n").encode(),
                     "pre-install.txt": ("\n".join(spec.pre_install) + "\n").encode()}
            lines = [f"FROM {self.options.base_image}", "ENV PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1"]
            ca = self._ca_bytes()
            if ca:
                files["ca-bundle.crt"] = ca
                lines += ca_dockerfile_lines()
            lines.append("COPY requirements.txt pre-install.txt /tmp/")
            if spec.pre_install:  # build helpers first, in a pip run of their own (as the local sandbox does)
                lines.append("RUN python -m pip install --no-cache-dir -r /tmp/pre-install.txt")
            if spec.requirements:
                lines.append("RUN python -m pip install --no-cache-dir -r /tmp/requirements.txt")
            labels = {LABEL: "1", ROLE: "env", "evoci.environment": spec.content_hash, "evoci.base": self.base_image_id()}
            log.info("building task image %s (%d requirements)", tag, len(spec.requirements))
            image_id = build_image(
                self.client, "\n".join(lines) + "\n", files, tag=tag, labels=labels, what="the task environment"
            )
            self.touch(tag)
            seconds = time.monotonic() - start
            log.info("built %s in %.1fs", tag, seconds)
        if self.options.image_budget_bytes:
            self.evict_lru(self.options.image_budget_bytes, keep={tag})
        return EnvironmentImage(tag, image_id, built=True, seconds=seconds)

    def require(self, ref: str) -> str:
        """The id of a prebuilt image (``options.image``); ``ImageMissing`` if it is not loaded."""
        image = self._get(ref, "load its archive with `evoci images load ARCHIVE`")
        self.touch(ref)
        return image.id

    # -- archives, listing, eviction -----------------------------------------------------------

    def ensure_archive(self, path: Path | str, digest: str) -> str:
        """The image of the archive whose content is ``digest``: loaded once, then found by its tag.

        The tag (``evoci/release:<digest>``) comes from the archive's content, not its path or the
        tags inside it, so two tasks whose archives both hold ``repo:latest`` never share an image.
        """
        tag = f"{RELEASE_REPOSITORY}:{digest[:32]}"
        with _lock_for(tag):
            if self._find(tag) is None:
                refs = self.load_archive(path)
                if not refs:
                    raise ContainerError(f"{path} held no image — is it a `docker save` archive?")
                self._get(refs[0], f"the engine did not keep the image of {path}").tag(tag)
            self.touch(tag, role="archive")
        return tag

    def load_archive(self, path: Path | str) -> list[str]:
        """Load a ``docker save`` archive (``.tar``, ``.tar.gz``); the tags (or ids) it held."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"image archive {path} does not exist")
        log.info("loading %s (%.0f MB)", path, path.stat().st_size / 1e6)
        refs: list[str] = []
        try:
            with path.open("rb") as stream:  # the engine itself unpacks gzip, bzip2 and xz
                for chunk in self.client.api.load_image(stream):
                    if "error" in chunk:
                        raise ContainerError(f"the engine could not load {path}: {chunk['error']}; is it a `docker save` archive?")
                    for line in str(chunk.get("stream", "")).splitlines():
                        for prefix in ("Loaded image: ", "Loaded image ID: "):
                            if line.startswith(prefix):
                                refs.append(line[len(prefix):].strip())
        except docker.errors.APIError as exc:
            raise ContainerError(f"the engine could not load {path}: {exc.explanation}; is it a `docker save` archive?") from exc
        except requests.exceptions.ConnectionError as exc:
            raise DockerUnavailable(f"lost the Docker engine while loading {path}: {exc}; {START_HINT}") from exc
        for ref in refs:
            self.touch(ref, role="archive")
        return refs

    def list(self) -> list[ImageInfo]:
        """evoci's images: those labelled ``evoci=1`` plus archives it loaded."""
        index = self._read_index()
        by_id: dict[str, ImageInfo] = {}
        for image in self.client.images.list(filters={"label": f"{LABEL}=1"}):
            by_id[image.id] = self._info(image, image.labels.get(ROLE, "?"), index)
        for ref, entry in index.items():
            if entry.get("role") == "archive":
                image = self._find(ref)
                if image is not None and image.id not in by_id:
                    by_id[image.id] = self._info(image, "archive", index)
        return sorted(by_id.values(), key=lambda i: (i.role, i.tags))

    def evict_lru(self, budget: int, *, keep: set[str] = frozenset()) -> list[str]:
        """Remove task images, least recently used first, until their own layers fit in ``budget`` bytes.

        Only ``env`` images are evicted (never the base or loaded archives); an image a container
        still uses is skipped. Sizes count each image's own layers (its size minus its base's).
        """
        entries = self._env_images()
        total = sum(own for _, own, _ in entries)
        removed: list[str] = []
        for last, own, image in sorted(entries, key=lambda e: e[0]):
            if total <= budget:
                break
            if keep & set(image.tags):
                continue
            try:
                self.client.images.remove(image.id, force=False, noprune=False)
            except docker.errors.APIError as exc:  # in use by a container: leave it
                log.info("not evicting %s: %s", image.tags or image.id, exc.explanation)
                continue
            total -= own
            removed += image.tags or [image.id]
            log.info("evicted %s (%.0f MB, last used %s)", image.tags or image.id, own / 1e6, _ago(last))
        self._forget(removed)
        return removed

    def own_sizes(self) -> dict[str, int]:
        """Each task image's own bytes (its size minus its base's), by its first tag: what eviction counts."""
        return {(image.tags or [image.id])[0]: own for _, own, image in self._env_images()}

    def _env_images(self) -> list[tuple[float, int, object]]:
        """(last use, own bytes, image) for every ``env`` image, each measured against its own base."""
        index = self._read_index()
        base_sizes: dict[str, int] = {}
        entries = []
        for image in self.client.images.list(filters={"label": f"{ROLE}=env"}):
            base_id = image.labels.get("evoci.base", "")
            if base_id not in base_sizes:
                base = self._find(base_id) if base_id else None
                base_sizes[base_id] = base.attrs.get("Size", 0) if base is not None else 0
            own = max(0, image.attrs.get("Size", 0) - base_sizes[base_id])
            last = max((index.get(t, {}).get("last_used", 0.0) for t in image.tags), default=0.0)
            entries.append((last, own, image))
        return entries

    # -- the last-use index --------------------------------------------------------------------

    def touch(self, ref: str, *, role: str | None = None) -> None:
        """Record that ``ref`` was used now."""
        with self._index() as index:
            entry = index.setdefault(ref, {})
            entry["last_used"] = time.time()
            if role:
                entry["role"] = role

    def _forget(self, refs: list[str]) -> None:
        if refs:
            with self._index() as index:
                for ref in refs:
                    index.pop(ref, None)

    @contextmanager
    def _index(self) -> Iterator[dict]:
        self.index_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.index_path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            index = self._read_index()
            yield index
            tmp = self.index_path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(index, indent=1, sort_keys=True))
            os.replace(tmp, self.index_path)

    def _read_index(self) -> dict:
        try:
            return json.loads(self.index_path.read_text())
        except FileNotFoundError:
            return {}
        except ValueError:
            log.warning("ignoring unreadable image index %s", self.index_path)
            return {}

    # -- helpers -------------------------------------------------------------------------------

    def _find(self, ref: str):
        try:
            return self.client.images.get(ref)
        except docker.errors.ImageNotFound:
            return None
        except requests.exceptions.ConnectionError as exc:
            raise DockerUnavailable(f"cannot reach the Docker engine: {exc}; {START_HINT}") from exc

    def _get(self, ref: str, hint: str):
        image = self._find(ref)
        if image is None:
            raise ImageMissing(f"image {ref!r} is not in the Docker engine — {hint}")
        return image

    def _ca_bytes(self) -> bytes | None:
        return read_ca_bundle(self.options.ca_bundle_path)

    def _info(self, image, role: str, index: dict) -> ImageInfo:
        last = [index[t]["last_used"] for t in image.tags if "last_used" in index.get(t, {})]
        return ImageInfo(tuple(image.tags), image.id, role, image.attrs.get("Size", 0), max(last) if last else None)


def _lock_for(tag: str) -> threading.Lock:
    with _build_locks_guard:
        return _build_locks.setdefault(tag, threading.Lock())


def _ago(timestamp: float) -> str:
    return "never" if not timestamp else f"{(time.time() - timestamp) / 3600:.1f} h ago"
