"""Benchmark: what SWE-EVO grading costs beyond the test command it runs.

For each instance of the built-in SWE-EVO demo, with its gold patch: the wall time of
``evoci.swebench.grade.grade`` (fresh grading tree from the base, patch applied, test files
restored, test_patch applied, hooks removed, the test command in the local sandbox, log
parsed) against the bare test command run with the same interpreter in the finished
grading tree (``bash -c <test_cmds>`` with the environment's bin first on PATH), medians of
--repeats alternating runs, as a ratio. Goal ≤ 1.2.

    .venv/bin/python benchmarks/swe_evo_grading.py [--repeats 7]

Timings on shared machines are noisy: read the ratios, and re-run before trusting a change.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import git

from evoci.domain import SandboxConfig
from evoci.sandbox import open_sandbox
from evoci.sandbox.environment import LocalEnvironments, resolve_environment
from evoci.settings import Paths
from evoci.swe_evo.demo import build_swe_evo_demo
from evoci.swe_evo.loader import load_swe_evo
from evoci.swebench.grade import GradeRequest, grade


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="evoci-bench-"))
    paths = Paths(home=home)
    data = load_swe_evo(build_swe_evo_demo(home / "demo"))
    environment = resolve_environment({})
    built = LocalEnvironments(paths.envs).ensure(environment)
    rows = []
    for instance in data.instances:
        source = git.Repo(instance.repo_path)
        request = GradeRequest(base_sha=instance.base_commit, patch=instance.answers.patch,
                               test_patch=instance.answers.test_patch, test_cmds=instance.test_cmds,
                               log_parser=instance.log_parser, targets=[*instance.f2p, *instance.p2p], timeout_s=600)
        tree = home / "trees" / instance.instance_id
        env = {**os.environ, "PATH": f"{built.bin_dir}:{os.environ['PATH']}", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": "src:.", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
        graded, bare = [], []
        for _ in range(args.repeats):
            start = time.monotonic()
            result = grade(request, source, tree, lambda root: open_sandbox(SandboxConfig(), root, environment, paths))
            graded.append(time.monotonic() - start)
            assert all(o == "passed" for o in result.outcomes.values()), result.output_tail
            start = time.monotonic()
            subprocess.run(["bash", "-c", instance.test_cmds], cwd=tree, env=env, capture_output=True, check=False)
            bare.append(time.monotonic() - start)
        rows.append((instance.instance_id, statistics.median(graded), statistics.median(bare)))
    print(f"| instance (medians of {args.repeats}) | grading s | bare test command s | ratio |")
    print("|---|---|---|---|")
    for name, g, b in rows:
        print(f"| {name} | {g:.3f} | {b:.3f} | **{g / b:.2f}** |")
    total_g, total_b = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"| all three | {total_g:.3f} | {total_b:.3f} | **{total_g / total_b:.2f}** |")


if __name__ == "__main__":
    main()
