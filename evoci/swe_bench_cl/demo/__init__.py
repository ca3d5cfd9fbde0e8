"""The built-in SWE-Bench-CL demo: ``strkit``, a small string library, and a sequence of six issues.

``history/NN_slug/`` holds the repository's commits (built into real git commits, like the
other demos): commit 0 is the first release, commit j resolves issue j. ``issues.json``
holds what people wrote about each issue (problem statement, hints, difficulty,
dependencies, F2P/P2P ids). ``build_cl_demo`` writes the curriculum JSON in the public
format, every field filled, with issue j based on commit j−1 and its gold ``patch`` and
``test_patch`` computed from commit j.

The sequence is built to need memory and to make forgetting possible: issues 2, 4 and 6
build on issues 1, 3 and 4–5; issue 5 changes the default separator that issues 1 and 2's
tests check (a solution remembered from issue 5 breaks issue 1 and 2 when re-tested);
issue 6 names a dependency outside the sequence.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from git import Repo

from evoci.demo_repo import build_demo_repo
from evoci.swebench.tree import is_test_code

HERE = Path(__file__).parent
DEMO_NAME = "swe-bench-cl-demo"
REPO_NAME = "evoci/strkit"
SEQUENCE_ID = "evoci__strkit_sequence"
FIRST_DAY = datetime(2024, 3, 1, tzinfo=timezone.utc)


def build_cl_demo(dest: Path) -> Path:
    """Build (or reuse) the demo repository under ``dest`` and write the curriculum; return its path."""
    dest = Path(dest).absolute()
    demo = build_demo_repo(dest / "strkit", HERE / "history")
    templates = json.loads((HERE / "issues.json").read_text())
    repo = Repo(demo.path)
    try:
        tasks = [_task(repo, t, k + 1, demo.commits[k], demo.commits[k + 1]) for k, t in enumerate(templates)]
    finally:
        repo.close()
    curriculum = {
        "metadata": {"name": DEMO_NAME, "description": "evoci's built-in SWE-Bench-CL sequence (offline)",
                     "version": "1", "num_sequences": 1, "total_tasks": len(tasks), "repositories": [REPO_NAME]},
        "evaluation_metrics": {"primary": ["ACC", "F", "FT", "BWT", "AULC", "CL-P", "CL-S", "CL-F1", "CL-Fβ"],
                               "efficiency": ["TUE"]},
        "sequences": [{
            "id": SEQUENCE_ID, "repo": REPO_NAME, "repo_path": "strkit", "num_tasks": len(tasks),
            "statistics": {"difficulty_distribution": _count(t["metadata"]["difficulty"] for t in tasks),
                           "tasks_with_dependencies": sum(1 for t in tasks if t["continual_learning"]["dependencies"])},
            "tasks": tasks,
        }],
    }
    path = dest / f"{DEMO_NAME}.json"
    text = json.dumps(curriculum, indent=1, ensure_ascii=False) + "\n"
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def _task(repo: Repo, template: dict, position: int, start: str, end: str) -> dict:
    changed = repo.git.diff("--name-only", "--no-renames", start, end).splitlines()
    code = [p for p in changed if not is_test_code(p)]
    tests = [p for p in changed if is_test_code(p)]
    return {
        "metadata": {"instance_id": f"evoci__strkit-{position}", "repo": REPO_NAME, "base_commit": start,
                     "created_at": (FIRST_DAY + timedelta(days=7 * position)).isoformat(),
                     "difficulty": template["difficulty"]},
        "task": {"problem_statement": template["problem_statement"], "hints_text": template["hints_text"]},
        "evaluation": {"patch": _diff(repo, start, end, code), "test_patch": _diff(repo, start, end, tests),
                       "FAIL_TO_PASS": template["FAIL_TO_PASS"], "PASS_TO_PASS": template["PASS_TO_PASS"]},
        "continual_learning": {"sequence_position": position, "difficulty_score": template["difficulty_score"],
                               "dependencies": template["dependencies"], "modified_files": code},
        "test_cmds": "pytest -rA tests", "log_parser": "parse_log_pytest",
    }


def _diff(repo: Repo, start: str, end: str, paths: list[str]) -> str:
    return repo.git.diff("--no-renames", "--binary", start, end, "--", *paths) + "\n" if paths else ""


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return counts


__all__ = ["DEMO_NAME", "SEQUENCE_ID", "build_cl_demo"]
