"""A SWE-CI release folder in the official layout, built from evoci's demo repository.

Two tasks: ``semverkit-full`` (the demo's base → oracle) and ``semverkit-ranges`` (a later
span of the same history). Each ``code.zip`` holds the repository with its ``.git``; with
``images``, each ``image.tar.gz`` is a real ``docker save`` of an image built offline FROM
evoci's base image, one per task.
"""

from __future__ import annotations

import csv
import gzip
import io
import zipfile
from pathlib import Path

from evoci.demo_repo import build_demo_repo
from evoci.swe_ci.demo import HISTORY_DIR

# (task id, index of the base commit, index of the oracle commit) in the demo's history.
TASKS = (("semverkit-full", 0, -1), ("semverkit-ranges", 5, 7))


def build_release(dest: Path, *, client=None, base_image: str = "evoci/base:bookworm") -> Path:
    """Write ``dest/metadata/test.csv`` and ``dest/data/<task>/``; images only when ``client`` is given."""
    repo = build_demo_repo(dest.parent / "semverkit", HISTORY_DIR)
    rows = []
    for task_id, base, oracle in TASKS:
        folder = dest / "data" / task_id
        folder.mkdir(parents=True)
        with zipfile.ZipFile(folder / "code.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(repo.path.rglob("*")):
                if path.is_file():
                    archive.write(path, Path("semverkit") / path.relative_to(repo.path))
        if client is not None:
            save_image(client, base_image, task_id, folder / "image.tar.gz")
        rows.append({"task_id": task_id, "current_sha": repo.commits[base], "target_sha": repo.commits[oracle],
                     "test_gap": ""})
    (dest / "metadata").mkdir(parents=True)
    with (dest / "metadata" / "test.csv").open("w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=["task_id", "current_sha", "target_sha", "test_gap"])
        writer.writeheader()
        writer.writerows(rows)
    return dest


def image_tag(task_id: str) -> str:
    return f"evoci-test-release/{task_id}:latest"


def save_image(client, base_image: str, task_id: str, archive: Path) -> None:
    """Build a one-label image FROM the base image (offline) and ``docker save`` it, gzipped."""
    dockerfile = f"FROM {base_image}\nLABEL evoci.test-release-task={task_id}\n".encode()
    client.images.build(fileobj=io.BytesIO(dockerfile), tag=image_tag(task_id), rm=True, network_mode="none")
    with gzip.open(archive, "wb", compresslevel=1) as out:
        for chunk in client.images.get(image_tag(task_id)).save(named=True):
            out.write(chunk)


def remove_images(client, tags: list[str]) -> None:
    for tag in tags:
        try:
            client.images.remove(tag, force=True)
        except Exception:  # already gone
            pass


__all__ = ["TASKS", "build_release", "image_tag", "remove_images"]
