"""Identity is content: what a run's config and a task's spec were when their results were made.

A run id names results made with one config; a task id within a run names results made
from one spec (its dataset line, then its resolved commits and environment). When either
changes under an existing id, evoci refuses with a ``DriftError`` that names every
changed key, and the recorded results stay as they were: old and new never merge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evoci.domain import RunConfig, TaskSpec
from evoci.errors import DriftError

# Resolved after prepare; compared with what the task's first run recorded.
RESOLVED = ("base_sha", "oracle_sha", "environment_hash")


def task_identity(task: TaskSpec) -> dict[str, Any]:
    """The task's spec as the dataset gave it (repo, refs, tests, environment extras, options)."""
    return task.model_dump(mode="json")


def changes(recorded: dict[str, Any], current: dict[str, Any], prefix: str = "") -> list[str]:
    """``key: old → new`` for every key whose value differs (nested dicts name the full path)."""
    out: list[str] = []
    for key in sorted(set(recorded) | set(current)):
        old, new = recorded.get(key), current.get(key)
        if isinstance(old, dict) and isinstance(new, dict):
            out.extend(changes(old, new, f"{prefix}{key}."))
        elif old != new:
            out.append(f"{prefix}{key}: {_short(old)} → {_short(new)}")
    return out


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def config_drift(run_id: str, recorded: dict[str, Any], config: RunConfig, *, recorded_dataset: str | None = None,
                 dataset: str | None = None) -> DriftError:
    """The error for a run id recorded with another config or dataset (``recorded``: its stored RunConfig).

    A protocol whose run name carries its dataset's content hash (SWE-EVO, NITR, SWE-Bench-CL)
    gets a new run id for a changed dataset; only an explicit ``--run-id`` can meet the old one.
    """
    current = config.identity()
    # Compare what the config hash covers: the keys that never shape results are left out.
    found = changes({k: v for k, v in recorded.items() if k in current}, current)
    if recorded_dataset is not None and dataset is not None and recorded_dataset != dataset:
        found.insert(0, f"dataset: {recorded_dataset} → {dataset}")
    found = found or ["the config hash (recorded by another evoci version)"]
    return DriftError(
        f"run {run_id} already holds results made with a different config or dataset ({'; '.join(found)}) — its "
        "results are kept as they are; pass a new --run-id to start a separate run, or run with the recorded settings to resume it",
        found,
    )


def check_run(db: Path | str, run_id: str, config: RunConfig, dataset: str) -> None:
    """Raise ``DriftError`` before a run starts if ``run_id`` is recorded in ``db`` with another config or dataset.

    The same rule as the run's claim (``Facts.claim_run``), checked before anything starts.
    """
    from evoci.store.db import reading

    from evoci.settings import location

    db = location(db)
    if isinstance(db, Path) and not db.exists():
        return
    with reading(db, run_id=run_id) as con:
        row = con.execute("select config_hash, config, dataset from runs where run_id = ?", [run_id]).fetchone()
    if row and (row[0] != config.config_hash() or row[2] != dataset):
        raise config_drift(run_id, json.loads(row[1]), config, recorded_dataset=row[2], dataset=dataset)


def task_drift(run_id: str, task_id: str, found: list[str]) -> DriftError:
    """The error for a task whose spec or resolved commits changed under an existing run id."""
    return DriftError(
        f"task {task_id} changed since run {run_id} recorded it ({'; '.join(found)}) — its recorded results are kept "
        "and nothing new was merged into them; pass a new --run-id to evolve the changed task, or restore its "
        "dataset line (and refs) to resume this run",
        found,
    )


__all__ = ["RESOLVED", "changes", "check_run", "config_drift", "task_drift", "task_identity"]
