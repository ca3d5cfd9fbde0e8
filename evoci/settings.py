"""Where evoci keeps its files. One place lists the defaults."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field


class Paths(BaseModel):
    """evoci's on-disk layout under one home folder (``EVOCI_HOME``, default ``./.evoci``)."""

    home: Path = Field(description="Root of everything evoci writes.")

    @classmethod
    def default(cls) -> "Paths":
        return cls(home=Path(os.environ.get("EVOCI_HOME", ".evoci")).absolute())

    @property
    def db(self) -> Path:
        """The DuckDB results database (override with ``EVOCI_DB`` or ``--db``)."""
        env = os.environ.get("EVOCI_DB")
        return Path(env).absolute() if env else self.home / "evoci.duckdb"

    @property
    def results(self) -> Path:
        """Prefect's persisted task results (what makes single-node retry possible)."""
        return self.home / "results"

    @property
    def envs(self) -> Path:
        """Built test environments, one folder per environment content hash."""
        return self.home / "envs"

    def workspace(self, run_id: str, task_id: str) -> Path:
        """The per-run, per-task workspace repository (one commit per iteration)."""
        return self.home / "runs" / run_id / task_id / "workspace"

    def artifacts(self, run_id: str, task_id: str) -> Path:
        """Files an iteration leaves for people: requirement.xml, non-passed/, reports."""
        return self.home / "runs" / run_id / task_id / "artifacts"
