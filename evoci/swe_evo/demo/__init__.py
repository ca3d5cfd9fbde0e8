"""The built-in SWE-EVO demo: ``kvconf``, a small configuration-file library, over three releases.

``history/NN_vX.Y.Z/`` holds one release per folder (built into real git commits, like the
SWE-CI demo); ``instances.json`` holds what people wrote about each transition — release
notes, the PR entries (mixed shapes: null titles, issues, a duplicate), the F2P and P2P
test ids in their log parser's format, the test command. ``build_swe_evo_demo`` builds the
repository and writes the SWE-bench-format records, with ``patch`` (gold: every non-test
change) and ``test_patch`` (the Python test changes) computed from the commits.

The quirks of the public data are all here: a parametrised test id with a space, truncated
by the ``-rA`` parser so that two tests collide (0.2.0); an instance with an empty P2P set
and a gold patch that edits a non-Python file under ``tests/`` (0.3.0); an instance with an
empty ``test_patch`` whose F2P test already exists, failing, in the base (0.3.1).
"""

from __future__ import annotations

import json
from pathlib import Path

from git import Repo

from evoci.demo_repo import build_demo_repo
from evoci.swebench.tree import is_test_code

HERE = Path(__file__).parent
HISTORY = HERE / "history"
DEMO_NAME = "swe-evo-demo"
REPO_NAME = "evoci/kvconf"


def build_swe_evo_demo(dest: Path) -> Path:
    """Build (or reuse) the demo repository under ``dest`` and write its records; return the dataset file."""
    dest = Path(dest).absolute()
    demo = build_demo_repo(dest / "kvconf", HISTORY)
    templates = json.loads((HERE / "instances.json").read_text())
    repo = Repo(demo.path)
    try:
        records = [_record(repo, t, demo.commits[k], demo.commits[k + 1]) for k, t in enumerate(templates)]
    finally:
        repo.close()
    dataset = dest / f"{DEMO_NAME}.json"
    text = json.dumps(records, indent=1) + "\n"
    if not dataset.exists() or dataset.read_text() != text:
        tmp = dataset.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(dataset)
    return dataset


def _record(repo: Repo, template: dict, start: str, end: str) -> dict:
    changed = repo.git.diff("--name-only", "--no-renames", start, end).splitlines()
    tests = [p for p in changed if is_test_code(p)]
    code = [p for p in changed if not is_test_code(p)]
    patch = _diff(repo, start, end, code)
    test_patch = _diff(repo, start, end, tests)
    prs = [
        {**pr, "pr_url": f"https://example.invalid/{REPO_NAME}/pull/{pr['pr_number']}",
         "patch_without_test": patch if k == 0 else "", "test_patch": test_patch if k == 0 else "",
         "changed_test_files": tests if k == 0 else []}
        for k, pr in enumerate(template["PRs"])
    ]
    return {
        "repo": REPO_NAME, "instance_id": template["instance_id"], "base_commit": start, "patch": patch,
        "test_patch": test_patch, "problem_statement": template["problem_statement"],
        "FAIL_TO_PASS": template["FAIL_TO_PASS"], "PASS_TO_PASS": template["PASS_TO_PASS"],
        "environment_setup_commit": end, "PRs": prs, "start_version": template["start_version"],
        "end_version": template["end_version"], "end_version_commit": end, "image": None,
        "version": template["end_version"].rsplit(".", 1)[0], "test_cmds": template["test_cmds"],
        "log_parser": template["log_parser"], "all_patch": test_patch + patch, "repo_path": "kvconf",
    }


def _diff(repo: Repo, start: str, end: str, paths: list[str]) -> str:
    if not paths:
        return ""
    return repo.git.diff("--no-renames", "--binary", start, end, "--", *paths) + "\n"


__all__ = ["DEMO_NAME", "build_swe_evo_demo"]
