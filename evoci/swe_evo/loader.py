"""Load SWE-EVO instances from SWE-bench-format records (the public SWE-EVO data's fields).

A dataset is a JSON array of records, one JSON record, a JSONL file, or a folder of
``<instance_id>.json`` files. Each record becomes an ``EvoInstance``: what the agent may
see (``task``: the release notes and the PR context — numbers, titles, links, issue
flags), what the grader needs (targets, test command, log parser, environment), and the
**answers** (gold ``patch``, ``test_patch``, ``all_patch``, every per-PR patch and changed
test file list), kept in ``answers`` so that only harness code ever reads them.

The repository is a local git repository (nothing is fetched at run time), named per
record by ``repo_path`` (a folder, or a ``.tar``/``.tar.gz``/``.tgz``/``.zip`` archive of
one), or found for the whole dataset under ``repos_dir`` as ``<owner>__<name>`` or
``<name>``. Relative paths are relative to the dataset file. The test environment comes from
the environment spec of the record's repository and version (``evoci.swebench.specs``), looked
up here without touching the record's identity. Without a spec, evoci's optional extras per
record: ``python`` (e.g. "3.9"), ``requirements`` (pip strings added to those the repo's
own dependency files list at the end version), ``pytest_plugins`` (plugins the test
command needs, loaded explicitly since plugin autoloading is off while grading) and
``pytest_autoload`` (true: let pytest autoload every installed plugin, for suites that need
more plugins than can be listed; the environment's plugins are then part of the grade).

A bad record is a ``DatasetError`` naming the record and what to fix; the others load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evoci.domain import TaskSpec, stable_hash
from evoci.errors import DatasetError
from evoci.names import check_name
from evoci.swebench.parsers import PARSERS
from evoci.swebench.specs import RepoSpec, SpecBook, load_specs, version_key
from evoci.untrusted import json_loads

REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "FAIL_TO_PASS", "PASS_TO_PASS")
ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")


class PullRequest(BaseModel):
    """What an agent may know of one PR or issue of the release (never its patches)."""

    model_config = ConfigDict(frozen=True)

    number: int | None = None
    title: str | None = None
    url: str | None = None
    is_issue: bool = False
    mentioned_in_release_note: bool = False


class Answers(BaseModel):
    """The release's real changes. Harness-only: graders and the gold/replay baselines read these."""

    model_config = ConfigDict(frozen=True)

    patch: str = Field("", description="Gold patch (non-test paths).")
    test_patch: str = Field("", description="Test changes applied before grading.")
    all_patch: str = ""
    pr_patches: tuple[dict[str, Any], ...] = Field((), description="Per PR: patch_without_test, test_patch, changed_test_files.")


class EvoInstance(BaseModel):
    """One SWE-EVO instance: one release transition of one repository."""

    model_config = ConfigDict(frozen=True)

    instance_id: str
    repo: str = Field(description="The record's repository name, e.g. 'owner/name'.")
    repo_path: str = Field(description="Local git repository (or archive of one) holding base_commit.")
    base_commit: str
    end_version_commit: str | None = None
    environment_setup_commit: str | None = None
    start_version: str | None = None
    end_version: str | None = None
    version: str | None = None
    release_notes: str
    prs: tuple[PullRequest, ...] = ()
    f2p: tuple[str, ...] = ()
    p2p: tuple[str, ...] = ()
    test_cmds: str = "pytest -rA"
    log_parser: str = "parse_log_pytest"
    python: str | None = None
    requirements: tuple[str, ...] = ()
    pytest_plugins: tuple[str, ...] = ()
    pytest_autoload: bool = Field(False, description="Let pytest autoload every installed plugin (off by default).")
    image: str | None = Field(None, description="The record's Docker image name: recorded, never pulled.")
    spec_key: str | None = Field(None, description="The version its environment spec is looked up by (major.minor of start_version).")
    spec: RepoSpec | None = Field(None, description="Its environment spec (evoci.swebench.specs), if one is known.")
    answers: Answers = Field(default_factory=Answers, repr=False)
    record_hash: str = Field(description="Content hash of the whole record: a changed record is a new instance.")

    @property
    def end_ref(self) -> str:
        """Where the environment's dependency files are read: the end version (else the base)."""
        return self.end_version_commit or self.environment_setup_commit or self.base_commit

    def task(self) -> TaskSpec:
        """What an agent is given: the base, the release notes and the PR context.

        No answers, and not the record's test command either: it may name the release's new test files.
        """
        return TaskSpec(
            task_id=self.instance_id, repo=self.repo_path, base_ref=self.base_commit, oracle_ref=self.base_commit,
            protocol="swe-evo", pythonpath=(),
            metadata={
                "repo": self.repo, "start_version": self.start_version, "end_version": self.end_version,
                "release_notes": self.release_notes, "prs": [p.model_dump() for p in self.prs],
            },
        )


@dataclass
class EvoDataset:
    """The instances that loaded, and one DatasetError per record that did not."""

    name: str
    instances: list[EvoInstance] = field(default_factory=list)
    errors: list[DatasetError] = field(default_factory=list)
    content_hash: str = ""


def load_swe_evo(source: str | Path, *, repos_dir: str | Path | None = None,
                 specs: SpecBook | None = None) -> EvoDataset:
    """Read every record of ``source`` (file or folder); never raises for one bad record.

    ``specs`` are the environment specs to look each record up in (default: the shipped ones).
    """
    source = Path(source)
    if not source.exists():
        raise DatasetError("SWE-EVO dataset not found — pass a .json/.jsonl file or a folder of .json records",
                           path=str(source))
    base_dir = source if source.is_dir() else source.parent
    data = EvoDataset(name=source.stem)
    specs = specs if specs is not None else load_specs()
    records = list(_records(source, data.errors))
    data.content_hash = stable_hash([r for _, r in records])
    seen: set[str] = set()
    for where, record in records:
        try:
            instance = parse_record(record, base_dir=base_dir, repos_dir=repos_dir, specs=specs)
        except DatasetError as exc:
            data.errors.append(DatasetError(str(exc), path=where))
            continue
        if instance.instance_id in seen:
            data.errors.append(DatasetError(f"duplicate instance_id {instance.instance_id!r} — ids must be unique",
                                            path=where))
            continue
        seen.add(instance.instance_id)
        data.instances.append(instance)
    return data


def parse_record(record: Any, *, base_dir: Path, repos_dir: str | Path | None = None,
                 specs: SpecBook | None = None) -> EvoInstance:
    """One record → EvoInstance, or a DatasetError saying which field is wrong and how to fix it.

    Its environment spec is looked up by repository and ``spec_key``; the record's identity
    (``record_hash``) is its own content only, whatever spec it gets.
    """
    if not isinstance(record, dict):
        raise DatasetError("a record must be a JSON object with SWE-bench fields (instance_id, repo, base_commit, …)")
    name = record.get("instance_id", "?")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise DatasetError(f"record {name!r} lacks {', '.join(missing)} — every record needs {', '.join(REQUIRED)}")
    f2p, p2p = _test_list(record, "FAIL_TO_PASS"), _test_list(record, "PASS_TO_PASS")
    parser_name = str(record.get("log_parser") or "parse_log_pytest")
    if parser_name not in PARSERS:
        raise DatasetError(f"record {name!r}: unknown log_parser {parser_name!r} — choose one of: "
                           f"{', '.join(sorted(PARSERS))} (or register one in evoci.swebench.parsers)")
    prs = record.get("PRs") or []
    if not isinstance(prs, list) or not all(isinstance(p, dict) for p in prs):
        raise DatasetError(f"record {name!r}: PRs must be a list of objects")
    return EvoInstance(
        instance_id=check_name(str(record["instance_id"]), "instance_id"), repo=str(record["repo"]),
        repo_path=_repo_path(record, base_dir, repos_dir),
        base_commit=str(record["base_commit"]),
        end_version_commit=record.get("end_version_commit"), environment_setup_commit=record.get("environment_setup_commit"),
        start_version=_opt_str(record.get("start_version")), end_version=_opt_str(record.get("end_version")),
        version=_opt_str(record.get("version")), release_notes=str(record["problem_statement"]),
        prs=tuple(_unique_prs(prs)), f2p=f2p, p2p=p2p,
        test_cmds=str(record.get("test_cmds") or "pytest -rA"), log_parser=parser_name,
        python=_opt_str(record.get("python")), requirements=tuple(map(str, record.get("requirements") or ())),
        pytest_plugins=tuple(map(str, record.get("pytest_plugins") or ())),
        pytest_autoload=bool(record.get("pytest_autoload")), image=record.get("image"),
        spec_key=(key := version_key(_opt_str(record.get("start_version")), _opt_str(record.get("version")))),
        spec=(specs or SpecBook()).lookup(str(record["repo"]), key),
        answers=Answers(
            patch=record.get("patch") or "", test_patch=record.get("test_patch") or "", all_patch=record.get("all_patch") or "",
            pr_patches=tuple({k: p.get(k) for k in ("pr_number", "patch_without_test", "test_patch", "changed_test_files")}
                             for p in prs),
        ),
        record_hash=stable_hash(record),
    )


def _records(source: Path, errors: list[DatasetError]):
    """(where, record) pairs from a folder of .json files, a JSON array/object, or JSONL."""
    files = sorted(source.glob("*.json")) if source.is_dir() else [source]
    for path in files:
        text = path.read_text(errors="replace")
        try:
            value = json_loads(text)
        except json.JSONDecodeError:
            value = None
        if value is not None:
            for k, record in enumerate(value if isinstance(value, list) else [value]):
                yield (f"{path}[{k}]" if isinstance(value, list) else str(path)), record
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", json_loads(line)
            except json.JSONDecodeError as exc:
                errors.append(DatasetError(f"not JSON ({exc.msg}) — each line must be one record", path=str(path), line=number))


def _test_list(record: dict, key: str) -> tuple[str, ...]:
    """A list of test ids; SWE-bench exports sometimes hold the list as a JSON string."""
    value = record[key]
    if isinstance(value, str):
        try:
            value = json_loads(value) if value.strip() else []
        except json.JSONDecodeError:
            raise DatasetError(f"record {record['instance_id']!r}: {key} is a string but not a JSON list") from None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise DatasetError(f"record {record['instance_id']!r}: {key} must be a list of test ids")
    return tuple(dict.fromkeys(value))  # the public data repeats some ids


def _unique_prs(prs: list[dict]) -> list[PullRequest]:
    """The agent-visible PR context, each PR once (the public data lists some twice)."""
    seen: dict[Any, PullRequest] = {}
    for p in prs:
        pr = PullRequest(number=p.get("pr_number"), title=p.get("pr_title"), url=p.get("pr_url") or p.get("pr_link"),
                         is_issue=bool(p.get("is_issue")), mentioned_in_release_note=bool(p.get("is_mentioned_in_release_note")))
        seen.setdefault((pr.number, pr.url, pr.is_issue), pr)
    return list(seen.values())


def _repo_path(record: dict, base_dir: Path, repos_dir: str | Path | None) -> str:
    given = record.get("repo_path")
    if given:
        path = Path(given) if Path(given).is_absolute() else base_dir / given
        if not path.exists():
            raise DatasetError(f"record {record['instance_id']!r}: repo_path {given!r} does not exist")
        return str(path.absolute())
    if repos_dir is None:
        raise DatasetError(
            f"record {record['instance_id']!r} has no repo_path — give each record a repo_path, or pass the folder "
            f"holding local clones (--repos DIR, with {record['repo'].replace('/', '__')} or "
            f"{record['repo'].split('/')[-1]} in it)"
        )
    owner_name = str(record["repo"])
    for candidate in (owner_name.replace("/", "__"), owner_name.split("/")[-1]):
        for suffix in ("", *ARCHIVES):
            path = Path(repos_dir) / f"{candidate}{suffix}"
            if path.exists():
                return str(path.absolute())
    raise DatasetError(f"record {record['instance_id']!r}: no local repository for {owner_name!r} in {repos_dir} "
                       f"— clone it there as {owner_name.replace('/', '__')}")


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
