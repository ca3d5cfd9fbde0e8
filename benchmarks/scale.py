"""Benchmark: how evoci's overhead grows with the number of tasks and the concurrency.

Generates evoci-authored tasks (a small library per task whose history adds one function and its
test per commit, so the replay agent needs one iteration per commit), then runs the `benchmark`
flow over 1..N of them at each concurrency, each in a fresh home with its own Prefect home, and
reports from the same run:
  - harness overhead per iteration: iteration wall time minus the test run and the agents' own
    time (`iterations.wall_s − test_s − architect_s − programmer_s`), median and 90th percentile;
  - the DuckDB file and the Prefect database after the run;
  - wall time of the whole command and of the benchmark flow (``runs.created_at`` →
    ``finished_at``: without the Prefect server's start), and the speed-up of each concurrency
    against concurrency 1 for the same tasks (on the flow's time);
  - the machine's 1-minute load average during the run (mean of samples every 5 s; it counts
    this run's own processes too).

    .venv/bin/python benchmarks/scale.py --tasks 1 10 50 --concurrency 1 2 4 --iterations 10

``--test-seconds S`` makes the tasks test-bound: every test run also runs a test that spins the
CPU for about S seconds (a fixed count of pure-Python arithmetic steps, calibrated once on this
machine before the runs, so every run does the same work):

    .venv/bin/python benchmarks/scale.py --tasks 4 --concurrency 1 2 --iterations 10 --test-seconds 3

Code quality is off (it measures pylint, not the harness). Timings on shared machines are noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from evoci.swe_ci.demo.generated import write_dataset


def spin(steps: int) -> int:
    """Pure-Python arithmetic, ``steps`` times: the test-bound tasks' CPU work (also used to calibrate it)."""
    total = 0
    for i in range(steps):
        total = (total * 31 + i) % 1_000_003
    return total


def steps_for(seconds: float) -> int:
    """How many ``spin`` steps take about ``seconds`` on one free core here (the best of seven short
    timings: on a loaded machine the others include waiting for a core)."""
    sample = 300_000
    best = min(_timed(spin, sample) for _ in range(7))
    return max(1, int(sample * seconds / best))


def _timed(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


# The test-bound work, as the generated tasks' test file holds it (the same in every commit).
def run_once(dataset: Path, tasks: int, concurrency: int, iterations: int) -> dict:
    """One benchmark run in a child process (fresh Prefect home); its measurements."""
    home = Path(tempfile.mkdtemp(prefix=f"evoci-scale-{tasks}x{concurrency}-"))
    env = {**os.environ, "PREFECT_HOME": str(home / "prefect"), "DO_NOT_TRACK": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
           "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    lines = dataset.read_text().splitlines()[:tasks]
    subset = home / "tasks.jsonl"
    subset.write_text("\n".join(lines) + "\n")
    load = LoadSampler()
    start = time.monotonic()
    with load:
        # A run that ends with failures still has measurements; its failures are listed, not hidden.
        ended = subprocess.run([str(Path(sys.executable).with_name("evoci")), "run", str(subset), "--home", str(home),
                                "--concurrency", str(concurrency), "--max-iterations", str(iterations)],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - start
    import duckdb

    con = duckdb.connect(str(home / "evoci.duckdb"), read_only=True)
    overheads = [r[0] for r in con.execute(
        """select wall_s - coalesce(test_s, 0) - coalesce(architect_s, 0) - coalesce(programmer_s, 0)
           from iterations where iteration >= 1""").fetchall()]
    done = con.execute("select count(*) from tasks where status = 'done'").fetchone()[0]
    flow_s = con.execute("select epoch(finished_at) - epoch(created_at) from runs").fetchone()[0]
    failures = con.execute("select task_id, node, kind, message from failures").fetchall()
    con.close()
    if ended.returncode or failures:
        print(f"  run {tasks}×{concurrency} exited {ended.returncode}; failures: {failures} (home {home})", flush=True)
    prefect_db = sum(p.stat().st_size for p in (home / "prefect").glob("*.db*"))
    return {"tasks": tasks, "concurrency": concurrency, "done": done, "iterations": len(overheads), "wall_s": wall,
            "flow_s": flow_s, "load": load.mean(),
            "overhead_median_s": statistics.median(overheads), "overhead_p90_s": _p90(overheads),
            "duckdb_mb": (home / "evoci.duckdb").stat().st_size / 1e6, "prefect_db_mb": prefect_db / 1e6}


class LoadSampler:
    """The 1-minute load average, sampled every 5 s while the ``with`` block runs."""

    def __init__(self, every_s: float = 5.0):
        self.every_s, self.samples = every_s, [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> "LoadSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def mean(self) -> float:
        return statistics.fmean(self.samples)


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--test-seconds", type=float, default=0.0,
                        help="make every test run spin the CPU for about this many seconds (test-bound tasks)")
    args = parser.parse_args()
    steps = steps_for(args.test_seconds) if args.test_seconds > 0 else 0
    if steps:
        print(f"test-bound: every test run spins {steps} steps (about {args.test_seconds:g} s here)", flush=True)
    dataset = write_dataset(Path(tempfile.mkdtemp(prefix="evoci-scale-repos-")), max(args.tasks), args.iterations, steps)
    results = []
    print("| tasks | concurrency | done | iterations | wall s | flow s | speed-up (flow) | "
          "overhead/iteration median (p90) s | DuckDB MB | Prefect DB MB | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for tasks in args.tasks:
        sequential = None
        for concurrency in args.concurrency:
            r = run_once(dataset, tasks, concurrency, args.iterations)
            sequential = sequential or (r["flow_s"] if concurrency == 1 else None)
            speedup = f"{sequential / r['flow_s']:.2f}×" if sequential else "—"
            results.append(r)
            print(f"| {tasks} | {concurrency} | {r['done']} | {r['iterations']} | {r['wall_s']:.1f} | {r['flow_s']:.1f} | "
                  f"{speedup} | {r['overhead_median_s']:.3f} ({r['overhead_p90_s']:.3f}) | {r['duckdb_mb']:.1f} | "
                  f"{r['prefect_db_mb']:.1f} | {r['load']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
