"""Where evoci keeps its files. One place lists the defaults."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from pydantic import BaseModel, Field


DB_WAIT_S = 300.0  # how long a write waits for another process to release the results file


STORE_SCHEMES = ("postgresql://", "postgres://")


def location(value: str | Path) -> Path | str:
    """A results location as given (``--db``/``--store``, ``EVOCI_STORE``, ``EVOCI_DB``).

    A PostgreSQL URL (``postgresql://…``) stays a string; anything else is a DuckDB file's path,
    made absolute.
    """
    text = str(value)
    return text if text.startswith(STORE_SCHEMES) else Path(value).absolute()


def db_wait_s() -> float:
    """Seconds to wait for a results file another process holds (``EVOCI_DB_WAIT_S``, default 300)."""
    return float(os.environ.get("EVOCI_DB_WAIT_S", DB_WAIT_S))


LEASE_TTL_S = 60.0  # a run's lease outlives its owner's last renewal by this long


def lease_ttl_s() -> float:
    """Seconds a lease lasts past its last renewal (``EVOCI_LEASE_TTL_S``, default 60)."""
    return float(os.environ.get("EVOCI_LEASE_TTL_S", LEASE_TTL_S))


class Paths(BaseModel):
    """evoci's on-disk layout under one home folder (``EVOCI_HOME``, default ``./.evoci``)."""

    home: Path = Field(description="Root of everything evoci writes.")

    @classmethod
    def default(cls) -> "Paths":
        return cls(home=Path(os.environ.get("EVOCI_HOME", ".evoci")).absolute())

    @classmethod
    def of(cls, home: str | Path | None) -> "Paths":
        """The layout under ``home`` (``--home``), else the default one."""
        return cls(home=Path(home).absolute()) if home else cls.default()

    def results_db(self, db: str | Path | None = None) -> Path | str:
        """The results store: ``db`` (``--db``/``--store``) if given, else this home's default (``db``)."""
        return location(db) if db else self.db

    @property
    def db(self) -> Path | str:
        """The results store: ``EVOCI_STORE`` or ``EVOCI_DB`` if set, else a DuckDB file in the home.

        Either names a DuckDB file or a PostgreSQL server (``postgresql://…``).
        """
        env = os.environ.get("EVOCI_STORE") or os.environ.get("EVOCI_DB")
        return location(env) if env else self.home / "evoci.duckdb"

    @property
    def results(self) -> Path:
        """Prefect's persisted task results (what makes single-node retry possible)."""
        return self.home / "results"

    @property
    def bytecode(self) -> Path:
        """Test modules' rewritten bytecode, kept by content between grading runs (``evoci.grading.bytecode``)."""
        return self.home / "bytecode"

    @property
    def envs(self) -> Path:
        """Built test environments, one folder per environment content hash."""
        return self.home / "envs"

    def task_dir(self, run_id: str, task_id: str) -> Path:
        """Everything of one task in one run; delete it to start that task afresh."""
        return self.home / "runs" / run_id / task_id

    def workspace(self, run_id: str, task_id: str) -> Path:
        """The per-run, per-task workspace repository (one commit per iteration)."""
        return self.task_dir(run_id, task_id) / "workspace"

    def artifacts(self, run_id: str, task_id: str) -> Path:
        """Files an iteration leaves for people: requirement.xml, non-passed/, reports."""
        return self.task_dir(run_id, task_id) / "artifacts"

    def task_identity(self, run_id: str, task_id: str) -> str:
        """A random id of this task folder's lifetime, made on first use.

        Part of every node's cache key: after the folder is deleted, no cached result
        can point at workspace commits that are gone.
        """
        marker = self.task_dir(run_id, task_id) / "identity"
        marker.parent.mkdir(parents=True, exist_ok=True)
        try:
            with marker.open("x") as f:  # exclusive create: two racing callers agree on one id
                f.write(uuid.uuid4().hex)
        except FileExistsError:
            pass
        return marker.read_text().strip()
