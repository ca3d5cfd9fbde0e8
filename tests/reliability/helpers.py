"""Running evoci's command line in-process, and a canary over every file outside a home."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from evoci.cli import main


@dataclass
class Done:
    """How one command ended: its exit code and what it printed."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_evoci(capsys, *args: str) -> Done:
    """``evoci ARGS`` through its entry point (``evoci.cli.main``), as the installed script runs it."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return Done(code, out.out, out.err)


def snapshot(root: Path, home: Path) -> dict[str, str]:
    """Every path under ``root`` outside ``home``, with its content hash (folders as 'dir')."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        if path == home or home in path.parents:
            continue
        found[str(path.relative_to(root))] = "dir" if path.is_dir() else hashlib.sha256(path.read_bytes()).hexdigest()
    return found
