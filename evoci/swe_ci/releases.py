"""The SWE-CI release layout: ``metadata/<split>.csv`` and ``data/<task_id>/`` per task.

    <release>/metadata/<split>.csv         task_id, current_sha, target_sha, test_gap (one row per task)
    <release>/data/<task_id>/code.zip      a git repository holding both commits
    <release>/data/<task_id>/image.tar.gz  one `docker save` image, used for the base and the oracle

``evoci run <release> --split <split>`` reads ``<release>/metadata/<split>.csv``. Each
``code.zip`` is unpacked once under ``<home>/releases/<sha256 of the zip>/``, so a changed
archive is a different repository and an unchanged one is never unpacked again. The image
archive is identified by its SHA-256 too (``TaskSpec.image_digest``); the Docker sandbox loads it
once and runs every test and agent command of the task in it. Without Docker, the local sandbox
builds the task's environment from the oracle's dependency files, as for any repository.

The test command is the official harness's: ``python -m pytest tests --color=no --tb=short
--disable-warnings -rfE`` with ``PYTHONPATH=src:.`` and a 3600 s timeout; evoci adds the
json-report options and grades, as always, the agent's source with the oracle's ``tests/``.
A bad row or a missing archive is reported with its row number; the other tasks still run.
"""

from __future__ import annotations

import csv
import hashlib
import shutil
import zipfile
from pathlib import Path

from pydantic import ValidationError

from evoci.domain import TaskSpec
from evoci.errors import DatasetError
from evoci.names import check_name

COLUMNS = ("task_id", "current_sha", "target_sha")
TEST_COMMAND = ("python", "-m", "pytest", "tests", "--color=no", "--tb=short", "--disable-warnings", "-rfE")
TEST_TIMEOUT_S = 3600.0


def is_split_file(path: Path) -> bool:
    """``path`` is ``<release>/metadata/<split>.csv`` of a folder that also has ``data/``."""
    return path.suffix == ".csv" and path.parent.name == "metadata" and (path.parent.parent / "data").is_dir()


def split_file(release: Path, split: str) -> Path:
    """The CSV of ``split``, or a DatasetError listing the splits there are."""
    path = release / "metadata" / f"{split}.csv"
    if not path.is_file() or not (release / "data").is_dir():
        have = sorted(p.stem for p in (release / "metadata").glob("*.csv")) if (release / "metadata").is_dir() else []
        hint = f"the splits here are: {', '.join(have)}" if have else "a release has metadata/<split>.csv and data/<task_id>/"
        raise DatasetError(f"no split {split!r} in this release — {hint}", path=str(release))
    return path


def release_name(path: Path) -> str:
    """``<release folder>-<split>``: the dataset's name in run ids."""
    return f"{path.parent.parent.name}-{path.stem}"


def load_release(path: Path, unpack_root: Path) -> tuple[list[TaskSpec], list[DatasetError]]:
    """The tasks of one split file; code archives are unpacked under ``unpack_root``."""
    tasks: list[TaskSpec] = []
    errors: list[DatasetError] = []
    seen: set[str] = set()
    with path.open(newline="", encoding="utf-8", errors="replace") as stream:
        reader = csv.DictReader(stream)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise DatasetError(f"missing column(s) {', '.join(missing)} — a split file needs {', '.join(COLUMNS)}",
                               path=str(path))
        for number, row in enumerate(reader, start=2):  # row 1 is the header
            try:
                task = _task(row, path.parent.parent / "data", unpack_root)
            except DatasetError as exc:
                errors.append(DatasetError(str(exc), path=str(path), line=number))
                continue
            if task.task_id in seen:
                errors.append(DatasetError(f"duplicate task_id {task.task_id!r}", path=str(path), line=number))
                continue
            seen.add(task.task_id)
            tasks.append(task)
    return tasks, errors


def _task(row: dict[str, str], data: Path, unpack_root: Path) -> TaskSpec:
    task_id = check_name((row.get("task_id") or "").strip(), "task_id")  # it names the folder data/<task_id>/
    folder = data / task_id
    code = folder / "code.zip"
    if not code.is_file():
        raise DatasetError(f"{code} is missing — each task needs data/<task_id>/code.zip")
    image = folder / "image.tar.gz"
    try:
        return TaskSpec(
            task_id=task_id, repo=str(_unpacked(code, unpack_root)),
            base_ref=(row.get("current_sha") or "").strip(), oracle_ref=(row.get("target_sha") or "").strip(),
            test_command=TEST_COMMAND, pythonpath=("src", "."), test_timeout_s=TEST_TIMEOUT_S,
            image_archive=str(image.absolute()) if image.is_file() else None,
            image_digest=sha256(image) if image.is_file() else None,
            metadata={"release": str(data.parent.absolute()), "test_gap": row.get("test_gap")},
        )
    except ValidationError as exc:
        raise DatasetError(f"invalid task ({exc.errors()[0]['msg']})") from None


def _unpacked(code: Path, unpack_root: Path) -> Path:
    """The git repository inside ``code`` (unpacked once per content); its top or single top folder."""
    target = unpack_root / sha256(code)[:32]
    if not target.is_dir():
        partial = target.with_name(target.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        try:
            with zipfile.ZipFile(code) as archive:
                for member in archive.namelist():
                    if member.startswith("/") or ".." in Path(member).parts:
                        raise DatasetError(f"{code} holds an unsafe path {member!r}")
                archive.extractall(partial)
        except zipfile.BadZipFile as exc:
            raise DatasetError(f"{code} is not a zip archive ({exc})") from None
        try:
            partial.rename(target)
        except OSError:  # another run unpacked the same archive meanwhile
            shutil.rmtree(partial, ignore_errors=True)
    for candidate in (target, *sorted(p for p in target.iterdir() if p.is_dir())):
        if (candidate / ".git").exists():
            return candidate
    raise DatasetError(f"{code} holds no git repository (no .git at its top or in its single top folder)")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()
