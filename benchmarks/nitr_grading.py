"""What evoci's NITR grading costs: the grade node's work vs running the probe's own tests and checks directly.

For each built-in probe (its ``intended`` reference applied and committed in a workspace):

- **direct**: in a ready tree (agent's code, starter code, evaluator; build folder and
  bytecode caches cleared before each run, untimed), run the pipeline's command modules
  (build, unit_test, customized_check) with ``subprocess.run`` in the same virtualenv — the
  least anyone could do to run the probe's own tests and checks;
- **evoci grading**: what the grade node does — build a fresh grading tree from the
  workspace commit, open the local sandbox, run every module (file modules included)
  through the Sandbox interface, delete the tree.

Each number is the median of ``--repeats`` runs (default 5) after one warm-up. C++ probes
are skipped when cmake, g++ or GoogleTest are missing.

    .venv/bin/python benchmarks/nitr_grading.py [--repeats 5]

Goal: evoci grading / direct ≤ 2 per probe.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.nitr.agents import ReferenceAgent, StepContext
from evoci.nitr.evaluator import evaluate
from evoci.nitr.loader import NitrProbe, load_suite
from evoci.nitr.suites import PROBES
from evoci.nitr.trees import build_grading_tree, create_workspace
from evoci.sandbox import open_sandbox
from evoci.settings import Paths

GOAL = 2.0


def median_time(fn: Callable[[], object], repeats: int, setup: Callable[[], object] = lambda: None) -> float:
    setup()
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def solved_workspace(probe: NitrProbe, root: Path, paths: Paths) -> tuple[Path, str]:
    workspace, sha = create_workspace(root / "workspace", probe)
    agent = ReferenceAgent(probe, "intended")
    for step in range(1, probe.steps + 1):
        sandbox = open_sandbox(SandboxConfig(), workspace.path, EnvironmentSpec(), paths)
        agent.run(StepContext(probe.probe_id, step, probe.steps, probe.task_text(step), sandbox))
        sha = workspace.commit(step, f"step {step}")
    return workspace.path, sha


def clean(tree: Path) -> None:
    """Untimed: what a fresh tree looks like (no build output, no bytecode from the last run)."""
    shutil.rmtree(tree / "build", ignore_errors=True)
    (tree / "build").mkdir()
    for cache in list(tree.rglob("__pycache__")):
        shutil.rmtree(cache, ignore_errors=True)


def direct(probe: NitrProbe, tree: Path, python: str) -> None:
    for module in probe.pipeline.modules:
        if module.command:
            argv = [python if part == "python" else part for part in module.argv()]
            subprocess.run(argv, cwd=tree, capture_output=True, check=False)


def evoci_grading(probe: NitrProbe, workspace: Path, sha: str, root: Path, paths: Paths) -> None:
    tree = build_grading_tree(root, probe, workspace, sha)
    sandbox = open_sandbox(SandboxConfig(), tree, EnvironmentSpec(), paths)
    try:
        grade = evaluate(probe.pipeline, sandbox, tree, ceiling_s=600)
    finally:
        sandbox.cleanup()
        shutil.rmtree(tree, ignore_errors=True)
    assert grade.status == "ok" and all(o == "passed" for o in grade.outcomes.values()), grade.summary()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    has_cpp = bool(shutil.which("cmake") and shutil.which("g++") and Path("/usr/include/gtest/gtest.h").is_file())
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="nitr-bench-") as tmp:
        paths = Paths(home=Path(tmp) / "home")
        python = str(open_sandbox(SandboxConfig(), Path(tmp), EnvironmentSpec(), paths).environment.bin_dir / "python")
        print(f"{'probe':32} {'direct s':>9} {'evoci s':>9} {'ratio':>6}")
        for probe in load_suite(PROBES).probes:
            if probe.language == "cpp" and not has_cpp:
                print(f"{probe.probe_id:32} skipped: needs cmake, g++ and GoogleTest")
                continue
            root = Path(tmp) / probe.probe_id
            workspace, sha = solved_workspace(probe, root, paths)
            ready = build_grading_tree(root / "ready", probe, workspace, sha)
            base = median_time(lambda: direct(probe, ready, python), args.repeats, setup=lambda: clean(ready))
            ours = median_time(lambda: evoci_grading(probe, workspace, sha, root / "graded", paths), args.repeats)
            worst = max(worst, ours / base)
            print(f"{probe.probe_id:32} {base:9.3f} {ours:9.3f} {ours / base:6.2f}")
    print(f"worst ratio {worst:.2f} (goal ≤ {GOAL:g})")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
