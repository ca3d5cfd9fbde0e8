"""Datasets: where tasks come from.

``demo`` is the built-in demo task. Any other name is a JSONL file of local
repositories, one task per line::

    {"task_id": "calc-1", "repo": "repos/calc", "base_ref": "v1.0", "oracle_ref": "v1.1"}

Optional keys are TaskSpec's (``tests_dir``, ``test_command``, ``pythonpath``,
``test_timeout_s``, ``metadata``). A relative ``repo`` is relative to the dataset file.
A SWE-CI release split (``<release>/metadata/<split>.csv``) loads through ``evoci.releases``.
A bad line is reported with its line number and skipped; the other tasks still run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from evoci.domain import TaskSpec
from evoci.errors import DatasetError
from evoci.releases import is_split_file, load_release, release_name
from evoci.settings import Paths

DEMO = "demo"
REQUIRED = ("task_id", "repo", "base_ref", "oracle_ref")


@dataclass
class Dataset:
    """The tasks that could be read, and a DatasetError for every line that could not."""

    name: str
    tasks: list[TaskSpec] = field(default_factory=list)
    errors: list[DatasetError] = field(default_factory=list)


def dataset_name(source: str) -> str:
    """A short, stable name for run ids: ``demo`` or the file's stem."""
    if source != DEMO and is_split_file(Path(source)):
        return release_name(Path(source))
    return DEMO if source == DEMO else Path(source).stem


def load_dataset(source: str, paths: Paths) -> Dataset:
    """Read ``source`` (``demo`` or a JSONL path); never raises for a bad line."""
    if source == DEMO:
        from evoci.demo import demo_task

        return Dataset(DEMO, [demo_task(paths.home / "demo" / "semverkit")])
    path = Path(source)
    if path.is_file() and is_split_file(path):
        tasks, errors = load_release(path, paths.home / "releases")
        return Dataset(dataset_name(source), tasks, errors)
    if not path.is_file():
        raise DatasetError("dataset file not found — pass `demo` or the path of a JSONL file", path=source)
    data = Dataset(dataset_name(source))
    seen: set[str] = set()
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            data.errors.append(DatasetError(f"not JSON ({exc.msg}) — each line must be one JSON object", path=source, line=number))
            continue
        if not isinstance(record, dict):
            data.errors.append(DatasetError("not a JSON object — each line must be {\"task_id\": …, …}", path=source, line=number))
            continue
        missing = [k for k in REQUIRED if k not in record]
        if missing:
            data.errors.append(DatasetError(f"missing field(s) {', '.join(missing)} — every task needs {', '.join(REQUIRED)}",
                                            path=source, line=number))
            continue
        repo = Path(str(record["repo"]))
        record["repo"] = str(repo if repo.is_absolute() else (path.parent / repo).absolute())
        try:
            task = TaskSpec.model_validate(record)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            data.errors.append(DatasetError(f"invalid task ({problems})", path=source, line=number))
            continue
        if task.task_id in seen:
            data.errors.append(DatasetError(f"duplicate task_id {task.task_id!r} — task ids must be unique", path=source, line=number))
            continue
        seen.add(task.task_id)
        data.tasks.append(task)
    return data
