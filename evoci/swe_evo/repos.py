"""Local repositories for SWE-EVO records: a git folder, or an archive of one unpacked once.

Nothing is fetched: a record's repository must be on this machine (a clone, or a
``.tar``/``.tar.gz``/``.tgz``/``.zip`` of one). An archive is unpacked under evoci's home,
in a folder named by its content hash, so a changed archive is a new repository.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path

from evoci.errors import TaskSpecError
from evoci.swe_evo.loader import ARCHIVES


def open_repository(path: str, cache: Path) -> Path:
    """The git work tree (or bare repository) at ``path``, unpacking an archive first."""
    source = Path(path)
    if not source.name.endswith(ARCHIVES):
        return source
    digest = hashlib.sha256()
    with source.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    dest = cache / digest.hexdigest()[:16]
    if not dest.exists():
        cache.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=cache))
        try:
            if source.name.endswith(".zip"):
                with zipfile.ZipFile(source) as archive:
                    archive.extractall(staging)
            else:
                with tarfile.open(source) as archive:
                    archive.extractall(staging, filter="tar")
            os.replace(staging, dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    for candidate in (dest, *sorted(p for p in dest.iterdir() if p.is_dir())):
        if (candidate / ".git").exists() or (candidate / "HEAD").is_file():
            return candidate
    raise TaskSpecError(f"archive {path} holds no git repository at its top level or one folder down "
                        "— archive a clone (with its .git folder)")
