"""Generated tasks: one small library per task whose history adds a function and its test per commit.

The replay agent needs one iteration per commit, so a dataset of these measures the harness, not an
agent: the scale benchmark and the cluster demo run them. Written by evoci, for evoci.
"""

from __future__ import annotations

import json
from pathlib import Path

import git

WORK_TEST = """\
STEPS = {steps}


def test_cpu_work():
    total = 0
    for i in range(STEPS):
        total = (total * 31 + i) % 1_000_003
    assert 0 <= total < 1_000_003
"""


def make_task_repo(path: Path, index: int, iterations: int, work_steps: int = 0) -> None:
    """A library ``lib<index>`` whose commit k adds function f<k> and its test (commit 0: f0 only);
    with ``work_steps``, every commit also has a test that spins the CPU that many steps."""
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as cfg:
        cfg.set_value("user", "name", "evoci-bench").set_value("user", "email", "bench@evoci.invalid")
        cfg.set_value("commit", "gpgsign", "false")
    (path / "tests").mkdir(parents=True, exist_ok=True)
    source, tests = "", f"import lib{index}\n"
    files = [f"lib{index}.py", "tests/test_lib.py"]
    if work_steps:
        (path / "tests" / "test_work.py").write_text(WORK_TEST.format(steps=work_steps))
        files.append("tests/test_work.py")
    for k in range(iterations + 1):
        source += f"\n\ndef f{k}(x):\n    return x * {k + 2} + {index}\n"
        tests += f"\n\ndef test_f{k}():\n    assert lib{index}.f{k}(1) == {k + 2 + index}\n"
        (path / f"lib{index}.py").write_text(source)
        (path / "tests" / "test_lib.py").write_text(tests)
        repo.index.add(files)
        date = f"2025-01-01T00:{k:02d}:00"
        repo.index.commit(f"add f{k}", author_date=date, commit_date=date)
    repo.create_tag("base", ref="HEAD~" + str(iterations))
    repo.create_tag("oracle", ref="HEAD")


def write_dataset(root: Path, tasks: int, iterations: int, work_steps: int = 0) -> Path:
    """``tasks`` generated repositories under ``root`` and their dataset, ``root/tasks.jsonl``."""
    root.mkdir(parents=True, exist_ok=True)
    dataset = root / "tasks.jsonl"
    with dataset.open("w") as out:
        for i in range(tasks):
            make_task_repo(root / f"lib{i}", i, iterations, work_steps)
            out.write(json.dumps({"task_id": f"lib{i}", "repo": str(root / f"lib{i}"), "base_ref": "base",
                                  "oracle_ref": "oracle"}) + "\n")
    return dataset


__all__ = ["WORK_TEST", "make_task_repo", "write_dataset"]
