"""The domain model shared by all four protocols: tasks, environments, test reports, runs.

One vocabulary (see docs/swe-ci.md and the header of sql/schema.sql): a *task* is a benchmark instance, a *run* executes a set
of tasks with one configuration, an *iteration* is one architect → programmer → test
round (0 = the base codebase), and a *test result* is one outcome of one test id.
"""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evoci.names import check_name

Protocol = Literal["swe-ci", "swe-evo", "nitr", "swe-bench-cl"]

# pytest-json-report outcomes plus `missing` (in the target set, absent from the report).
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "missing")

# Files whose content defines a Python test environment, in the order they are read.
DEPENDENCY_FILES = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "test-requirements.txt",
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
)


def stable_hash(value: Any, length: int = 16) -> str:
    """A short content hash of any JSON-serialisable value (key order does not matter)."""
    blob = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


class EnvironmentSpec(BaseModel):
    """What a task's tests need installed. Resolved from the oracle's dependency files."""

    model_config = ConfigDict(frozen=True)

    python: str | None = Field(None, description="Python version wanted, e.g. '3.11'; None = evoci's own.")
    requirements: tuple[str, ...] = Field((), description="pip requirement strings, in install order.")
    pre_install: tuple[str, ...] = Field((), description="pip requirements installed first, in a pip run of their own "
                                         "(build helpers the requirements need).")
    dependency_files: dict[str, str] = Field(
        default_factory=dict, description="Path → content of every dependency file read (for the record)."
    )
    image_archive: str | None = Field(
        None, description="A `docker save` archive that is this task's image in the Docker sandbox (SWE-CI releases); "
        "the local sandbox builds from the dependency files instead."
    )
    image_digest: str | None = Field(None, description="SHA-256 of ``image_archive``: the image's identity.")

    @property
    def content_hash(self) -> str:
        """Identity of the environment: equal hashes share one built virtualenv or image."""
        identity = {"python": self.python, "requirements": list(self.requirements)}
        if self.pre_install:  # only then, so environments without it keep their hash
            identity["pre_install"] = list(self.pre_install)
        if self.image_digest:  # only then, so environments without an archive keep their hash
            identity["image"] = self.image_digest
        return stable_hash(identity)

    def with_requirements(self, extra: tuple[str, ...] | list[str]) -> "EnvironmentSpec":
        """This environment plus ``extra`` requirements (those already listed are not repeated)."""
        added = tuple(r for r in extra if r not in self.requirements)
        return self.model_copy(update={"requirements": self.requirements + added}) if added else self


class TaskSpec(BaseModel):
    """One benchmark instance. For SWE-CI: evolve ``base_ref`` toward ``oracle_ref``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str = Field(description="Unique within a dataset; used in every fact's key and as a folder name.")
    repo: str = Field(description="Path of a local git repository holding both refs.")
    base_ref: str = Field(description="The starting codebase c0 (commit, branch or tag).")
    oracle_ref: str = Field(description="The oracle codebase c* whose tests define the target.")
    protocol: Protocol = "swe-ci"
    tests_dir: str = Field("tests", description="The oracle's test folder; replaces the base's.")
    test_command: tuple[str, ...] = Field(
        ("python", "-m", "pytest", "tests"),
        description="pytest invocation; evoci appends the json-report options.",
    )
    pythonpath: tuple[str, ...] = Field(("src", "."), description="PYTHONPATH entries, relative to the workspace.")
    test_timeout_s: float | None = Field(None, gt=0, description="Overrides the run's test timeout for this task.")
    extra_requirements: tuple[str, ...] = Field(
        (), description="pip requirement strings added to the environment resolved from the oracle (e.g. 'pytest-cov')."
    )
    image_archive: str | None = Field(None, description="This task's `docker save` archive (SWE-CI release layout).")
    image_digest: str | None = Field(None, description="SHA-256 of ``image_archive`` (its identity).")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Protocol-specific extras, stored as JSON.")

    @field_validator("task_id")
    @classmethod
    def _task_id_is_a_name(cls, value: str) -> str:
        return check_name(value, "task_id")

    @field_validator("tests_dir")
    @classmethod
    def _tests_dir_inside(cls, value: str) -> str:
        """The oracle's test folder is replaced in the workspace: it must stay inside it."""
        parts = value.replace("\\", "/").split("/")
        if not value.strip() or value.startswith("/") or ".." in parts or all(p in ("", ".") for p in parts):
            raise ValueError(f"tests_dir {value!r} must be a folder inside the repository, e.g. 'tests'")
        return value


class TestStatus(StrEnum):
    """How a test run ended. None of these is an infrastructure failure (those raise)."""

    __test__ = False  # not a pytest test class

    OK = "ok"  # pytest ran and wrote its report
    AGENT_ERROR = "agent_error"  # the codebase kept the tests from running (syntax error, collection crash)
    TIMEOUT = "timeout"  # the suite was killed at the test timeout


class TestReport(BaseModel):
    """One test run of one codebase, as pytest-json-report saw it."""

    __test__ = False  # not a pytest test class

    status: TestStatus
    outcomes: dict[str, str] = Field(default_factory=dict, description="test id → outcome, as reported.")
    details: dict[str, str] = Field(
        default_factory=dict, description="test id → failure text (longrepr), for non-passed tests only."
    )
    collection_errors: dict[str, str] = Field(default_factory=dict, description="collector node id → error text.")
    exit_code: int | None = None
    duration_s: float = 0.0
    output_tail: str = Field("", description="The last lines of pytest's output, for people reading a failure.")
    graded_overrides: list[str] = Field(
        default_factory=list, description="Paths where the graded tree differs from the agent's (restored or removed)."
    )
    integrity_flags: list[str] = Field(
        default_factory=list, description="Additions to the source that reach into the test framework (to be read)."
    )

    def outcomes_for(self, targets: list[str] | tuple[str, ...]) -> dict[str, str]:
        """One outcome per target test id; ``missing`` when the report lacks it."""
        return {t: self.outcomes.get(t, "missing") for t in targets}

    def passed(self) -> set[str]:
        return {t for t, o in self.outcomes.items() if o == "passed"}


class SandboxConfig(BaseModel):
    """Where test runs and agents execute."""

    kind: Literal["local", "docker", "host"] = Field(
        "local",
        description="'local': per-task virtualenv under bubblewrap; 'docker': containers; "
        "'host': virtualenv without isolation (opt-in, trusted agents only).",
    )
    options: dict[str, Any] = Field(default_factory=dict, description="Kind-specific settings (image, limits, ...).")


class AgentConfig(BaseModel):
    """Which agent plays a role, and how."""

    kind: str = Field("replay", description="'replay' (human history), 'llm', or 'command' (external CLI).")
    model: str | None = Field(None, description="Model name for 'llm' agents; ignored by 'replay'.")
    options: dict[str, Any] = Field(default_factory=dict, description="Kind-specific settings.")


_LATER_FIELDS = ("attempts", "grade_every_step", "code_quality")


class RunConfig(BaseModel):
    """Everything that shapes a run's results. Stored whole with the run."""

    run_id: str | None = Field(None, description="Name of the run; default: derived from the config, so re-running resumes.")
    protocol: Protocol = "swe-ci"
    max_iterations: int = Field(
        20, ge=1, le=126, description="N: the most CI iterations per task (SWE-CI default 20; the views hold up to 126)."
    )
    architect: AgentConfig = Field(default_factory=AgentConfig)
    programmer: AgentConfig = Field(default_factory=AgentConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    test_timeout_s: float = Field(3600.0, gt=0, description="Kill a test run after this many seconds (SWE-CI: 3600).")
    output_limit_bytes: int = Field(1_000_000, gt=0, description="Keep at most this much of each output stream.")
    max_repairs: int = Field(3, ge=0, description="Environment self-repair rounds when the oracle's tests miss a module.")
    code_quality: bool = Field(
        False, description="Measure MI, complexity, pylint score and changed lines of the base, each iteration and the "
        "oracle (SWE-CI §4; pylint costs seconds per codebase, so it is asked for)."
    )
    concurrency: int = Field(2, ge=1, description="Tasks evolved at once by the benchmark flow.")
    node_retries: int = Field(2, ge=0, description="Retries of a node that failed for infrastructure reasons.")
    retry_delays_s: list[float] = Field([2.0, 10.0], description="Seconds before each retry (the last repeats).")
    attempts: int = Field(1, ge=1, le=100, description="NITR: independent attempts per probe (Pass@k, stability).")
    grade_every_step: bool = Field(False, description="NITR: also grade each intermediate step (a diagnostic).")

    @field_validator("run_id")
    @classmethod
    def _run_id_is_a_name(cls, value: str | None) -> str | None:
        return value if value is None else check_name(value, "run id")

    def identity(self) -> dict[str, Any]:
        """What the results depend on (not the run's name, nor how it is scheduled or retried).

        Fields added after results existed (``_LATER_FIELDS``) count only when set away from
        their default, so older runs keep their ids and resume.
        """
        data = self.model_dump(mode="json", exclude={"run_id", "concurrency", "node_retries", "retry_delays_s"})
        for name in _LATER_FIELDS:
            if data[name] == RunConfig.model_fields[name].default:
                del data[name]
        return data

    def config_hash(self) -> str:
        """Hash of ``identity()``: a run id must never hold results of two different configs."""
        return stable_hash(self.identity())

    def resolved_run_id(self, dataset: str) -> str:
        """The explicit run id, or one derived from the dataset name and config hash."""
        return self.run_id or f"{dataset}-{self.config_hash()[:10]}"
