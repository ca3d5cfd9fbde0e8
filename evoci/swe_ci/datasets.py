"""SWE-CI's datasets: where its tasks come from.

``demo`` is the built-in demo task. Any other name is a JSONL file of local
repositories, one task per line::

    {"task_id": "calc-1", "repo": "repos/calc", "base_ref": "v1.0", "oracle_ref": "v1.1"}

Optional keys are TaskSpec's (``tests_dir``, ``test_command``, ``pythonpath``,
``test_timeout_s``, ``metadata``). A relative ``repo`` is relative to the dataset file.
A SWE-CI release split (``<release>/metadata/<split>.csv``) loads through ``evoci.swe_ci.releases``.
A bad line is reported with its line number and skipped; the other tasks still run. Lines are
read strictly: not UTF-8, an unknown field (named with the nearest valid one), a value of the
wrong type (never coerced), an id that is not a folder name, or a line over ``MAX_LINE_BYTES``
(a task is passed to its flow run as a parameter: large data goes in a file the task names) is
a bad line. A file with no task line at all is refused before any run is recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from evoci.domain import TaskSpec
from evoci.errors import DatasetError
from evoci.preflight import unknown_keys
from evoci.settings import Paths
from evoci.swe_ci.releases import is_split_file, load_release, release_name
from evoci.untrusted import json_loads

DEMO = "demo"
REQUIRED = ("task_id", "repo", "base_ref", "oracle_ref")
FIELDS = tuple(name for name in TaskSpec.model_fields if name != "protocol")
MAX_LINE_BYTES = 1 << 20  # a flow run's parameters go through Prefect's API; 1 MiB is far above any real task


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
        from evoci.swe_ci.demo import demo_task

        return Dataset(DEMO, [demo_task(paths.home / "demo" / "semverkit")])
    path = Path(source)
    if path.is_file() and is_split_file(path):
        tasks, errors = load_release(path, paths.home / "releases")
        return Dataset(dataset_name(source), tasks, errors)
    if not path.is_file():
        raise DatasetError("dataset file not found — pass `demo` or the path of a JSONL file", path=source)
    data = Dataset(dataset_name(source))
    seen: set[str] = set()
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        try:
            task = _task(raw, path)
        except DatasetError as exc:
            data.errors.append(DatasetError(str(exc), path=source, line=number))
            continue
        if task is None:
            continue
        if task.task_id in seen:
            data.errors.append(DatasetError(f"duplicate task_id {task.task_id!r} — task ids must be unique", path=source, line=number))
            continue
        seen.add(task.task_id)
        data.tasks.append(task)
    if not data.tasks and not data.errors:
        raise DatasetError("the dataset holds no task — each line must be one JSON task "
                           '({"task_id": …, "repo": …, "base_ref": …, "oracle_ref": …})', path=source)
    return data


def _task(raw: bytes, path: Path) -> TaskSpec | None:
    """One line's task (None for a blank line), or a DatasetError saying what is wrong."""
    if len(raw) > MAX_LINE_BYTES:
        raise DatasetError(f"the line is {len(raw) / 1e6:.1f} MB, over the {MAX_LINE_BYTES // (1 << 20)} MiB a task "
                           "line may hold — put large data in a file and name it in the task (pass it by reference)")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 (byte {exc.start + 1}) — save the dataset as UTF-8") from None
    if not line.strip():
        return None
    try:
        record = json_loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not JSON ({exc.msg}) — each line must be one JSON object") from None
    if not isinstance(record, dict):
        raise DatasetError("not a JSON object — each line must be {\"task_id\": …, …}")
    problem = unknown_keys(record, FIELDS, "field")
    if problem:
        raise DatasetError(problem)
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise DatasetError(f"missing field(s) {', '.join(missing)} — every task needs {', '.join(REQUIRED)}")
    if not isinstance(record["repo"], str):
        raise DatasetError(f"invalid task (repo: must be a string path, got {type(record['repo']).__name__})")
    repo = Path(record["repo"])
    record["repo"] = str(repo if repo.is_absolute() else (path.parent / repo).absolute())
    try:  # strict: a value of the wrong type is an error, never converted ("60" is not a timeout)
        return TaskSpec.model_validate_json(json.dumps(record), strict=True)
    except ValidationError as exc:
        problems = "; ".join(str(e["ctx"]["error"]) if e["type"] == "value_error"  # says its field itself
                             else f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise DatasetError(f"invalid task ({problems})") from None
