"""Task images: built once per environment, loaded from archives, evicted least-recently-used."""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import docker
import docker.errors
import pytest

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox.docker import DockerOptions, ImageMissing, ImageStore, open_docker_sandbox

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("no_leftover_containers")]


@pytest.fixture
def store(docker_client, base_image, docker_paths) -> ImageStore:
    return ImageStore(docker_client, docker_paths, DockerOptions.parse({}))


def _fresh(store: ImageStore, spec: EnvironmentSpec) -> str:
    """The spec's tag, with any image of that tag removed first (so the next ensure builds)."""
    tag = store.environment_tag(spec)
    try:
        store.client.images.remove(tag, force=True)
    except docker.errors.ImageNotFound:
        pass
    return tag


def test_the_same_environment_is_built_once(store):
    spec = EnvironmentSpec(requirements=("pytest",))  # already in the base: pip has nothing to fetch
    tag = _fresh(store, spec)
    first = store.ensure(spec)
    second = store.ensure(spec)
    assert (first.built, second.built) == (True, False)
    assert first.image_id == second.image_id
    assert first.tag == second.tag == tag
    image = store.client.images.get(tag)
    assert image.labels["evoci"] == "1" and image.labels["evoci.role"] == "env"


def test_a_changed_environment_gets_another_image(store):
    one = store.environment_tag(EnvironmentSpec(requirements=("pytest",)))
    other = store.environment_tag(EnvironmentSpec(requirements=("pytest", "iniconfig")))
    assert one != other


def test_a_failing_build_says_what_failed(store):
    from evoci.errors import EnvironmentBuildError

    spec = EnvironmentSpec(requirements=("--definitely-not-a-pip-option",))
    with pytest.raises(EnvironmentBuildError, match="no such option"):
        store.ensure(spec)


def test_least_recently_used_images_are_evicted_first(store):
    pad = "x" * 20_000  # a comment line: each image gets ~20 kB of its own
    old = EnvironmentSpec(requirements=(f"# evict-old {pad}",))
    new = EnvironmentSpec(requirements=(f"# evict-new {pad}",))
    old_tag, new_tag = _fresh(store, old), _fresh(store, new)
    store.ensure(old)
    store.ensure(new)
    for image in store.client.images.list(filters={"label": "evoci.role=env"}):  # everything else is newer
        for tag in image.tags:
            if tag != old_tag:
                store.touch(tag)
    own = store.own_sizes()  # images built earlier on another base (C++) are measured against theirs
    assert own[old_tag] > 0
    removed = store.evict_lru(sum(own.values()) - own[old_tag])
    assert removed == [old_tag]
    assert store.client.images.get(new_tag)
    with pytest.raises(docker.errors.ImageNotFound):
        store.client.images.get(old_tag)


def _tiny_image(client, repository: str, tag: str) -> str:
    """Import a one-file image (no registry, no base): enough to save and load."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    client.api.import_image_from_data(data.getvalue(), repository=repository, tag=tag)
    return f"{repository}:{tag}"


def test_a_saved_archive_loads_and_is_listed(store, docker_client, tmp_path: Path, open_sandbox, workspace):
    tag = _tiny_image(docker_client, "evoci-test/archived", "1")
    for name in ("image.tar", "image.tar.gz"):
        archive = tmp_path / name
        with (gzip.open(archive, "wb") if name.endswith(".gz") else archive.open("wb")) as out:
            for chunk in docker_client.images.get(tag).save(named=True):
                out.write(chunk)
        docker_client.images.remove(tag)
        assert store.load_archive(archive) == [tag]
    sandbox = open_sandbox(workspace, image=tag)  # used as-is: no build
    assert sandbox.image == tag
    assert tag in {t for info in store.list() for t in info.tags}
    docker_client.images.remove(tag)


def test_a_missing_image_raises_image_missing(open_sandbox, workspace):
    with pytest.raises(ImageMissing, match="evoci images load"):
        open_sandbox(workspace, image="evoci-test/never-loaded:1")


def test_a_missing_base_image_says_to_bootstrap(docker_paths, workspace, base_image):
    config = SandboxConfig(kind="docker", options={"base_image": "evoci-test/no-base:1"})
    with pytest.raises(ImageMissing, match="evoci images bootstrap"):
        open_docker_sandbox(config, workspace, EnvironmentSpec(), docker_paths)
