"""A write-behind spool: fact batches that could not be written because the file stayed locked.

A batch is a list of ``(sql, parameters)`` statements, kept as one file in ``<db>.spool/``
(named by time, so batches replay in the order they were made). The next write to the
database, from any evoci process, replays every pending batch first, inside its own
transaction, and deletes their files once that transaction has committed. Every
statement is idempotent (``on conflict do nothing`` or an upsert), so a batch replayed
twice after a crash between the commit and the deletion writes nothing twice.
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
from pathlib import Path
from typing import Any

Statement = tuple[str, list[Any]]
_serial = itertools.count()


class Spool:
    """The pending fact batches of one results database."""

    def __init__(self, db: Path):
        self.folder = Path(db).absolute().with_name(Path(db).name + ".spool")

    def add(self, batch: list[Statement]) -> Path:
        """Keep ``batch`` until the next write can replay it; written atomically (rename)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(_serial):06d}"
        partial = self.folder / f".{name}.partial"
        partial.write_bytes(pickle.dumps(batch))
        return partial.replace(self.folder / f"{name}.batch")

    def pending(self) -> list[Path]:
        """Files of the batches waiting to be written, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(self.folder.glob("*.batch"))

    def replay(self, con: Any) -> list[Path]:
        """Execute every pending batch on ``con`` (inside the caller's transaction); return their files."""
        files = self.pending()
        for path in files:
            for sql, params in pickle.loads(path.read_bytes()):
                con.execute(sql, params)
        return files

    @staticmethod
    def written(files: list[Path]) -> None:
        """Forget batches whose transaction committed."""
        for path in files:
            path.unlink(missing_ok=True)


__all__ = ["Spool", "Statement"]
