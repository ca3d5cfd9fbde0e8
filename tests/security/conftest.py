"""The outside canary: whatever a red-team agent does, no file outside its run's own folders changes.

Every red-team test runs with a canary file and a canary folder planted *beside* the evoci home
(where a link an agent plants can point: the harness must never write through it), and with a
digest of every file under the home's parent folder (the canaries, the demo repositories, the
home's other runs, results, environments). After the test, each of those files must be there
unchanged and nothing new may appear outside the home. Inside the home only new files are
allowed (this run's folders and results), plus the results database the run writes.

A module whose tests share one home overrides ``redteam_home``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Written by every run, by design: the results store (and its write-ahead log), and the Docker
# sandbox's index of image last-use times (evoci/sandbox/docker/images.py).
_RUN_WRITES = ("evoci.duckdb", "docker/images.json")


@dataclass
class Canary:
    """The planted canary file and folder, and folders the test declares as its run's own."""

    root: Path
    home: Path
    file: Path = field(init=False)
    folder: Path = field(init=False)
    owned: list[Path] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.file = self.root / "canary.txt"
        self.folder = self.root / "canary-dir"

    def plant(self) -> None:
        self.file.write_text("the host's file: no run may change it\n")
        self.folder.mkdir(exist_ok=True)
        (self.folder / "results.json").write_text('{"another run": "its results"}\n')

    def own(self, path: Path) -> None:
        """Declare ``path`` (a run folder the test may reuse) as the run's own: changes there are allowed."""
        self.owned.append(path)

    def digests(self) -> dict[str, str]:
        found = {}
        for top, folders, files in os.walk(self.root):  # never follows a link
            for name in [*folders, *files]:
                path = Path(top, name)
                found[path.relative_to(self.root).as_posix()] = _digest(path)
        return found

    def allowed(self, rel: str, new: bool) -> bool:
        path = self.root / rel
        if any(path == p or path.is_relative_to(p) for p in self.owned):
            return True
        if not path.is_relative_to(self.home) or path.is_relative_to(self.folder):
            return False
        return new or path.relative_to(self.home).as_posix().startswith(_RUN_WRITES)


def _digest(path: Path) -> str:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return f"link {os.readlink(path)}"
    if stat.S_ISDIR(info.st_mode):
        return "folder"
    if not stat.S_ISREG(info.st_mode):
        return f"special {stat.S_IFMT(info.st_mode)}"
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return f"file {stat.S_IMODE(info.st_mode):o} {digest.hexdigest()}"


@pytest.fixture
def redteam_home(tmp_path) -> Path:
    """The evoci home the test's runs use, in a folder of its own (the test's other files stay outside the watch)."""
    return tmp_path / "lab" / "home"


@pytest.fixture(autouse=True)
def outside_canary(redteam_home):
    """Plant the canaries beside the home; after the test, assert nothing outside the run's own folders changed."""
    canary = Canary(redteam_home.parent, redteam_home)
    canary.root.mkdir(parents=True, exist_ok=True)
    canary.plant()
    before = canary.digests()
    yield canary
    after = canary.digests()
    changed = sorted(p for p in before if after.get(p) != before[p] and not canary.allowed(p, new=False))
    added = sorted(p for p in after.keys() - before.keys() if not canary.allowed(p, new=True))
    assert not changed and not added, f"outside the run's own folders: changed {changed[:20]}, added {added[:20]}"
