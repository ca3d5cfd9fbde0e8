"""``SandboxBlock``: where tests and agents run, saved in Prefect, with the client it opens.

    SandboxBlock(kind="docker", options={"memory": "4g", "cpus": 2}).save("containers")
    evoci run tasks.jsonl --sandbox-block containers

A run stores the block's *content* (kind and options) in its config, so its results say
how they were made even if the block is edited later.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect.blocks.core import Block
from pydantic import Field

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.sandbox import SANDBOXES, open_sandbox
from evoci.sandbox.base import Sandbox
from evoci.settings import Paths


class SandboxBlock(Block):
    """A sandbox kind ('local' or 'docker') and its options (image, limits, CA bundle, ...)."""

    _block_type_name = "evoci Sandbox"
    _block_type_slug = "evoci-sandbox"
    _description = "Where evoci runs tests and agents: a local virtualenv or Docker containers, with their options."

    kind: str = Field("local", description="'local' (per-task virtualenv) or 'docker' (a container per command).")
    options: dict[str, Any] = Field(default_factory=dict, description="Kind-specific options, e.g. memory, cpus, image.")

    def config(self) -> SandboxConfig:
        if self.kind not in SANDBOXES:
            raise ValueError(f"unknown sandbox {self.kind!r} — choose one of: {', '.join(sorted(SANDBOXES))}")
        return SandboxConfig(kind=self.kind, options=self.options)

    def open(self, workspace: Path, environment: EnvironmentSpec, paths: Paths) -> Sandbox:
        """A sandbox over ``workspace`` with ``environment`` built (or found in the cache)."""
        return open_sandbox(self.config(), workspace, environment, paths)


__all__ = ["SandboxBlock"]
