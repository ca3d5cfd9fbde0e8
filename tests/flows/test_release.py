"""A SWE-CI release folder in the official layout, run end to end in the local and the Docker sandbox."""

from __future__ import annotations

import pytest

from evoci.cli import main
from evoci.swe_ci.releases import sha256
from tests.flows.helpers import query
from tests.swe_ci.releases import TASKS, build_release, image_tag, remove_images
from tests.sandbox.docker.conftest import base_image, docker_client  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

TASK_IDS = [t for t, _, _ in TASKS]


def _ran_both_tasks(db) -> None:
    assert query(db, "select task_id, status from tasks order by task_id") == [(t, "done") for t in sorted(TASK_IDS)]
    # Each task: iteration 0 (the base) and 2 iterations scored against the oracle's target set.
    assert query(db, "select task_id, count(*) from swe_ci_iterations group by task_id order by task_id") == [
        (t, 3) for t in sorted(TASK_IDS)]
    assert query(db, "select count(*) from failures where kind = 'infrastructure'") == [(0,)]


def test_release_runs_in_the_local_sandbox(tmp_path):
    release = build_release(tmp_path / "release")
    home = tmp_path / "home"
    assert main(["run", str(release), "--split", "test", "--home", str(home), "--max-iterations", "2"]) == 0
    _ran_both_tasks(home / "evoci.duckdb")


@pytest.mark.docker
def test_release_runs_in_docker_each_task_in_its_own_loaded_image(tmp_path, docker_client, base_image):
    release = build_release(tmp_path / "release", client=docker_client, base_image=base_image)
    digests = {t: sha256(release / "data" / t / "image.tar.gz") for t in TASK_IDS}
    built = {t: docker_client.images.get(image_tag(t)).id for t in TASK_IDS}
    loaded = [f"evoci/release:{d[:32]}" for d in digests.values()]
    remove_images(docker_client, [image_tag(t) for t in TASK_IDS])  # so the run must load the archives
    try:
        home = tmp_path / "home"
        assert main(["run", str(release), "--split", "test", "--home", str(home), "--max-iterations", "2",
                     "--sandbox", "docker"]) == 0
        _ran_both_tasks(home / "evoci.duckdb")
        # Each task's archive was loaded and tagged by its content: two distinct images, the ones built.
        assert {t: docker_client.images.get(f"evoci/release:{digests[t][:32]}").id for t in TASK_IDS} == built
        assert len(set(built.values())) == 2
    finally:
        remove_images(docker_client, [*loaded, *[image_tag(t) for t in TASK_IDS]])
