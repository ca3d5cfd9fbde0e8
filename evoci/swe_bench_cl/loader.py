"""Load the SWE-Bench-CL curriculum JSON (sequences of issues) into ``CLSequence``s.

The public format: ``{metadata, evaluation_metrics, sequences: [{id, repo, num_tasks,
statistics, tasks: [{metadata{instance_id, repo, base_commit, created_at, difficulty},
task{problem_statement, hints_text}, evaluation{patch, test_patch, FAIL_TO_PASS,
PASS_TO_PASS}, continual_learning{sequence_position, difficulty_score, dependencies,
modified_files}}]}]}``. ``dependencies`` are kept as given: they may name issues of
another sequence, or later ones.

The format names no environment. evoci takes it, per issue, from (first found): the
task's own extras, the sequence's extras, an environments file keyed by ``instance_id``
(SWE-bench-style records: ``test_cmds``, ``log_parser``, ``python``, ``requirements``,
``pytest_plugins``, ``environment_setup_commit``, ``version``), and finally the repository's runner:
django's ``tests/runtests.py``, sympy's ``bin/test``, else ``pytest -rA``. What the tests need
installed comes from the environment specs, as for SWE-EVO (``evoci.swebench.specs``: repository ×
the issue's ``version``); the environments file may instead be a spec side file, which then adds to
or overrides the shipped specs. Repositories are
local, as for SWE-EVO: ``repo_path`` (task or sequence extra), or ``repos_dir``.

Each issue becomes an ``EvoInstance`` (``issue.instance``), so preparing and grading are
the shared SWE-bench-format nodes. The gold patch, ``test_patch`` and ``modified_files``
(the gold solution's file list) live only in the instance's answers, never in a prompt.
A bad task or sequence is a ``DatasetError`` naming it; the rest loads.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from evoci.domain import stable_hash
from evoci.errors import DatasetError
from evoci.names import check_name
from evoci.swe_evo.loader import EvoInstance, parse_record
from evoci.swebench.specs import SpecBook, is_spec_file, load_specs
from evoci.untrusted import json_loads

ENVIRONMENT_FIELDS = ("test_cmds", "log_parser", "python", "requirements", "pytest_plugins", "environment_setup_commit",
                      "version")
# The test runner each repository's F2P/P2P ids are written for (SWE-bench's conventions).
RUNNERS = {
    "django/django": {"test_cmds": "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
                      "log_parser": "parse_log_django"},
    "sympy/sympy": {"test_cmds": "bin/test -C --verbose", "log_parser": "parse_log_sympy"},
}
DEFAULT_RUNNER = {"test_cmds": "pytest -rA", "log_parser": "parse_log_pytest"}


class CLIssue(BaseModel):
    """One issue of a sequence: its place, what an agent may read, and the gradable instance."""

    model_config = ConfigDict(frozen=True)

    sequence_id: str
    position: int
    instance: EvoInstance
    hints_text: str = ""
    created_at: str | None = None
    difficulty: str | None = None
    difficulty_score: int | None = None
    dependencies: tuple[str, ...] = ()
    modified_files: tuple[str, ...] = ()  # the gold solution's files: harness-only

    @property
    def instance_id(self) -> str:
        return self.instance.instance_id

    @property
    def problem_statement(self) -> str:
        return self.instance.release_notes


class CLSequence(BaseModel):
    """One sequence, its issues in order of ``sequence_position``."""

    model_config = ConfigDict(frozen=True)

    sequence_id: str
    repo: str
    issues: tuple[CLIssue, ...]

    @property
    def n(self) -> int:
        return max((i.position for i in self.issues), default=0)


@dataclass
class CLDataset:
    name: str
    sequences: list[CLSequence] = field(default_factory=list)
    errors: list[DatasetError] = field(default_factory=list)
    content_hash: str = ""


def load_swe_bench_cl(source: str | Path, *, repos_dir: str | Path | None = None,
                      environments: str | Path | None = None) -> CLDataset:
    """Read a curriculum file; one bad task or sequence is an error in ``errors``, the rest loads."""
    source = Path(source)
    try:
        data = json_loads(source.read_text())
    except FileNotFoundError:
        raise DatasetError("SWE-Bench-CL curriculum not found — pass the curriculum JSON file", path=str(source)) from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"not JSON ({exc.msg}) — the curriculum is one JSON object", path=str(source)) from None
    if not isinstance(data, dict) or not isinstance(data.get("sequences"), list):
        raise DatasetError("a curriculum is an object with a 'sequences' list", path=str(source))
    specs = load_specs(environments) if is_spec_file(environments) else load_specs()
    envs = {} if specs.side_file_hash else _environments(environments)
    dataset = CLDataset(name=source.stem, content_hash=stable_hash([data, envs, specs.side_file_hash]))
    for k, sequence in enumerate(data["sequences"]):
        where = f"{source}[sequence {k}]"
        try:
            loaded = parse_sequence(sequence, source.parent, repos_dir, envs, dataset.errors, where, specs)
        except DatasetError as exc:
            dataset.errors.append(DatasetError(str(exc), path=where))
            continue
        if any(s.sequence_id == loaded.sequence_id for s in dataset.sequences):
            dataset.errors.append(DatasetError(f"duplicate sequence id {loaded.sequence_id!r}", path=where))
            continue
        dataset.sequences.append(loaded)
    return dataset


def parse_sequence(sequence: Any, base_dir: Path, repos_dir, envs: dict[str, dict], errors: list[DatasetError],
                   where: str, specs: SpecBook | None = None) -> CLSequence:
    if not isinstance(sequence, dict) or "id" not in sequence or not isinstance(sequence.get("tasks"), list):
        raise DatasetError("a sequence needs 'id', 'repo' and a 'tasks' list")
    sequence_id, repo = check_name(str(sequence["id"]), "sequence id"), str(sequence.get("repo") or "")
    issues: list[CLIssue] = []
    for k, task in enumerate(sequence["tasks"]):
        try:
            issue = parse_task(task, sequence, base_dir, repos_dir, envs, specs)
        except DatasetError as exc:
            errors.append(DatasetError(f"sequence {sequence_id!r}: {exc}", path=f"{where}[task {k}]"))
            continue
        clash = next((i for i in issues if i.position == issue.position or i.instance_id == issue.instance_id), None)
        if clash is not None:
            errors.append(DatasetError(
                f"sequence {sequence_id!r}: {issue.instance_id} repeats the position or id of {clash.instance_id} "
                "— positions and instance ids must be unique in a sequence", path=f"{where}[task {k}]"))
            continue
        issues.append(issue)
    return CLSequence(sequence_id=sequence_id, repo=repo, issues=tuple(sorted(issues, key=lambda i: i.position)))


def parse_task(task: Any, sequence: dict, base_dir: Path, repos_dir, envs: dict[str, dict],
               specs: SpecBook | None = None) -> CLIssue:
    """One task object → CLIssue, or a DatasetError saying what is missing."""
    if not isinstance(task, dict):
        raise DatasetError("a task must be an object with metadata, task, evaluation and continual_learning")
    parts = {name: task.get(name) for name in ("metadata", "task", "evaluation", "continual_learning")}
    missing = [name for name, value in parts.items() if not isinstance(value, dict)]
    if missing:
        raise DatasetError(f"task lacks {', '.join(missing)} (objects)")
    meta, text, evaluation, cl = parts.values()
    name = meta.get("instance_id", "?")
    position = cl.get("sequence_position")
    if not isinstance(position, int) or isinstance(position, bool) or position < 1:
        raise DatasetError(f"task {name!r}: continual_learning.sequence_position must be an integer ≥ 1")
    repo = str(meta.get("repo") or sequence.get("repo") or "")
    extras = {**_runner(repo), **envs.get(str(name), {}), **_extras(sequence), **_extras(task)}
    record = {
        "instance_id": name, "repo": repo, "base_commit": meta.get("base_commit"),
        "problem_statement": text.get("problem_statement"),
        "FAIL_TO_PASS": evaluation.get("FAIL_TO_PASS"), "PASS_TO_PASS": evaluation.get("PASS_TO_PASS"),
        "patch": evaluation.get("patch"), "test_patch": evaluation.get("test_patch"),
        "repo_path": task.get("repo_path") or sequence.get("repo_path"), **extras,
    }
    record = {k: v for k, v in record.items() if v is not None}
    instance = parse_record(record, base_dir=base_dir, repos_dir=repos_dir, specs=specs)
    score = cl.get("difficulty_score")
    return CLIssue(
        sequence_id=str(sequence["id"]), position=position,
        instance=instance.model_copy(update={"record_hash": stable_hash(task)}),
        hints_text=str(text.get("hints_text") or ""), created_at=_opt(meta.get("created_at")),
        difficulty=_opt(meta.get("difficulty")), difficulty_score=score if isinstance(score, int) else None,
        dependencies=tuple(map(str, cl.get("dependencies") or ())),
        modified_files=tuple(map(str, cl.get("modified_files") or ())),
    )


def _runner(repo: str) -> dict[str, str]:
    return dict(RUNNERS.get(repo, DEFAULT_RUNNER))


def _extras(obj: dict) -> dict[str, Any]:
    return {k: obj[k] for k in ENVIRONMENT_FIELDS if obj.get(k) is not None}


def _environments(path: str | Path | None) -> dict[str, dict]:
    """instance_id → environment fields, from SWE-bench-style records (a JSON list, object or JSONL)."""
    if path is None:
        return {}
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise DatasetError("environments file not found — pass SWE-bench-style records keyed by instance_id",
                           path=str(path)) from None
    try:
        value = json_loads(text)
        records = value if isinstance(value, list) else list(value.values()) if "instance_id" not in value else [value]
    except json.JSONDecodeError:
        records = [json_loads(line) for line in text.splitlines() if line.strip()]
    return {str(r["instance_id"]): _extras(r) for r in records if isinstance(r, dict) and "instance_id" in r}


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)
