"""Benchmark: what the evolution loop costs beyond the work it orchestrates.

Runs the built-in demo end to end in a fresh home and reports, all from the same run:
  1. end-to-end wall time of `evoci demo` (Prefect start-up included);
  2. per-iteration harness overhead: the time between two iterations' "recorded" events
     minus the test run and the agents' own time (median over iterations);
  3. the test node's wall time (the Prefect task, as the flow calls it, cache refreshed: grading
     tree built, tests run in the configured sandbox, bubblewrap by default)
     against a bare `python -m pytest --json-report` on the same code with the same
     interpreter (medians of --repeats alternating runs), as a ratio;
  4. the same bare run on a copy of the code that never keeps bytecode (`-B`, no `__pycache__`),
     as a fresh checkout runs: the test node compiles the tree's modules and rewrites the
     tests' assertions on every run (each grading tree is new and is not written back), while
     the bare run in (3) reuses the bytecode its previous run left in the workspace.

    .venv/bin/python benchmarks/loop_overhead.py [--repeats 7]

Timings on shared machines are noisy: read the ratios, and re-run before trusting a change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "WARNING")

from prefect import flow  # noqa: E402

from evoci.domain import RunConfig  # noqa: E402
from evoci.flows.benchmark import benchmark  # noqa: E402
from evoci.progress import subscribe  # noqa: E402
from evoci.runtime import Prepared, RunContext  # noqa: E402
from evoci.sandbox.environment import LocalEnvironments  # noqa: E402
from evoci.store import connect  # noqa: E402
from evoci.tasks.test import test_task  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="evoci-bench-"))
    config = RunConfig()
    run = RunContext.create(config, "demo", home=str(home))

    stamps: list[tuple[int, float]] = []
    unsubscribe = subscribe(lambda e: stamps.append((e.iteration, time.monotonic())) if e.stage == "iteration" else None)
    start = time.monotonic()
    benchmark("demo", config, home=run.home, db=run.db)
    end_to_end = time.monotonic() - start
    unsubscribe()

    with connect(Path(run.db), read_only=True) as con:
        rows = con.execute("""select iteration, test_s, coalesce(architect_s, 0) + coalesce(programmer_s, 0), codebase_sha
                              from iterations where run_id = ? order by iteration""", [run.run_id]).fetchall()
    by_iteration = {i: (test_s, agent_s) for i, test_s, agent_s, _ in rows}
    overheads = []
    for (_, prev_t), (i, t) in zip(stamps, stamps[1:]):
        test_s, agent_s = by_iteration[i]
        overheads.append((t - prev_t) - test_s - agent_s)

    # The test node as the flow calls it vs bare pytest, on the final codebase.
    final_sha = rows[-1][3]
    prepared = _prepared(run)
    node = test_task.with_options(refresh_cache=True, result_storage=run.paths.results)
    python = LocalEnvironments(run.paths.envs).ensure(prepared.environment).python
    workspace = Path(prepared.workspace)
    fresh = home / "bench-fresh-code"
    shutil.copytree(workspace, fresh, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))

    def bare(where: Path, *flags: str, **env: str) -> float:
        t0 = time.monotonic()
        subprocess.run([str(python), *flags, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider", "--json-report",
                        "--json-report-file=/dev/null"], cwd=where, env={**_bare_env(), "PYTHONPATH": "src:.", **env},
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return time.monotonic() - t0

    @flow(name="bench-test-node")
    def time_nodes() -> tuple[list[float], list[float], list[float]]:
        node_times, bare_times, fresh_times = [], [], []
        for _ in range(args.repeats):
            t0 = time.monotonic()
            node(prepared, run, "bench", final_sha)
            node_times.append(time.monotonic() - t0)
            bare_times.append(bare(workspace))
            fresh_times.append(bare(fresh, "-B", PYTHONDONTWRITEBYTECODE="1"))
        return node_times, bare_times, fresh_times

    node_times, bare_times, fresh_times = time_nodes()
    node_med, bare_med, fresh_med = (statistics.median(t) for t in (node_times, bare_times, fresh_times))
    print(f"demo: {len(rows) - 1} iterations, {args.repeats} timed test-node runs\n")
    print(f"{'measure':<48} {'value':>10}")
    print(f"{'end-to-end wall time of the demo (s)':<48} {end_to_end:>10.2f}")
    print(f"{'harness overhead per iteration, median (s)':<48} {statistics.median(overheads):>10.3f}")
    print(f"{'harness overhead per iteration, max (s)':<48} {max(overheads):>10.3f}")
    print(f"{'test node (grading tree, sandbox), median (s)':<48} {node_med:>10.3f}")
    print(f"{'bare pytest --json-report, median (s)':<48} {bare_med:>10.3f}")
    print(f"{'ratio test node / bare pytest':<48} {node_med / bare_med:>10.2f}")
    # The fastest runs are the ones least slowed by other work on a shared machine.
    print(f"{'ratio of the fastest runs (node / bare)':<48} {min(node_times) / min(bare_times):>10.2f}")
    print(f"{'bare pytest, no bytecode kept, median (s)':<48} {fresh_med:>10.3f}")
    print(f"{'ratio test node / bare pytest, no bytecode kept':<48} {node_med / fresh_med:>10.2f}")
    print(f"\nload average (1, 5, 15 min) at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _prepared(run: RunContext) -> Prepared:
    from evoci.swe_ci.datasets import load_dataset
    from evoci.tasks.prepare import prepare_task

    task = load_dataset("demo", run.paths).tasks[0]
    return prepare_task.fn(task, run)


def _bare_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}


if __name__ == "__main__":
    sys.exit(main())
