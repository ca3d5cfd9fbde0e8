"""Small git repositories made for a test: a list of commits, each a dict of files."""

from __future__ import annotations

import json
from pathlib import Path

import git

DATE = "2024-01-01T00:00:00"


def make_repo(path: Path, commits: list[dict[str, str | None]], tags: dict[str, int]) -> Path:
    """Commit each dict of path → content (None deletes) in order; tag commits by index."""
    path.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "t").set_value("user", "email", "t@t.invalid")
        cfg.set_value("commit", "gpgsign", "false")
    shas = []
    for index, files in enumerate(commits):
        for name, content in files.items():
            target = path / name
            if content is None:
                repo.index.remove([name], working_tree=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            repo.index.add([name])
        shas.append(repo.index.commit(f"commit {index}", author_date=DATE, commit_date=DATE).hexsha)
    for tag, index in tags.items():
        repo.create_tag(tag, ref=shas[index])
    return path


CALC_V0 = "def add(a, b):\n    return a + b\n"
CALC_TESTS = """\
import calc

def test_add():
    assert calc.add(1, 2) == 3

def test_add_negative():
    assert calc.add(-1, -2) == -3

def test_sub():
    assert calc.sub(3, 2) == 1

def test_mul():
    assert calc.mul(3, 2) == 6

def test_div():
    assert calc.div(6, 3) == 2
"""


def calc_repo(path: Path, *, slow_s: float = 0.0, regression_s: float = 0.0) -> Path:
    """base: add only (2 of 5 oracle tests pass). Then sub; a refactor that breaks add for
    negatives (a regression) and adds mul; the fix plus div (the oracle, 5 of 5).
    ``slow_s`` makes every test run of the oracle's tests take at least that long;
    ``regression_s`` adds that much to the test runs of the regressing code (the replay's iteration 2)."""
    slow = {"tests/conftest.py": (
        f"import pathlib, time\ntime.sleep({slow_s})\n"
        "if 'abs(a)' in (pathlib.Path(__file__).parents[1] / 'src/calc/__init__.py').read_text():\n"
        f"    time.sleep({regression_s})\n")} if slow_s or regression_s else {}
    return make_repo(path, [
        {"src/calc/__init__.py": CALC_V0, "tests/test_calc.py": "import calc\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n",
         "requirements.txt": ""},
        {"src/calc/__init__.py": CALC_V0 + "\ndef sub(a, b):\n    return a - b\n"},
        {"src/calc/__init__.py": "def add(a, b):\n    return abs(a) + abs(b)\n\ndef sub(a, b):\n    return a - b\n\n"
                                  "def mul(a, b):\n    return a * b\n"},
        {"src/calc/__init__.py": CALC_V0 + "\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n\n"
                                  "def div(a, b):\n    return a / b\n", "tests/test_calc.py": CALC_TESTS, **slow},
    ], {"base": 0, "oracle": 3})


# n(c) with the oracle's tests, per commit: 2, 3, 3 (add_negative broken, mul added), 5.
CALC_PASSING = (2, 3, 3, 5)


def write_dataset(path: Path, records: list[dict | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path
