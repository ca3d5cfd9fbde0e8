"""Benchmark: one run's tasks over 1 and 2 workers of a work pool, beside the embedded default, in one invocation.

On one machine, as ``scripts/cluster_demo.py`` sets it up: PostgreSQL, a Prefect server on it,
and for each concurrency C and worker count W a fresh work pool whose W workers (separate homes)
take C tasks at once between them (``--limit`` C/W each); the run's process queues the tasks with
``--task-deployment``. Beside each C, the same tasks run on the embedded default: a DuckDB file
and the ephemeral Prefect server on SQLite, tasks as threads. Every number comes from the
results store of that run:

- **lost**: tasks of the dataset not ``done`` (goal 0);
- **overhead per iteration**: ``iterations.wall_s − test_s − architect_s − programmer_s``, median
  and 90th percentile (goal: flat as C grows, ≤ 0.3 s);
- **flow s**: the run's ``created_at`` → ``finished_at``; **iterations/s per worker**: the run's
  iterations ÷ flow s ÷ W (the embedded run counts as one worker);
- the machine's 1-minute load average during the run.

    .venv/bin/python benchmarks/scale_cluster.py [--concurrency 8 16 32] [--tasks-per-slot 1] [--iterations 3]

Each configuration runs C × tasks-per-slot generated tasks. Timings on shared machines are noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVOCI = str(Path(sys.executable).with_name("evoci"))
PREFECT = str(Path(sys.executable).with_name("prefect"))


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass in it looks its module up there
    spec.loader.exec_module(module)
    return module


demo = _load("cluster_demo", REPO / "scripts" / "cluster_demo.py")
scale = _load("scale", REPO / "benchmarks" / "scale.py")

OVERHEAD = """select wall_s - coalesce(test_s, 0) - coalesce(architect_s, 0) - coalesce(programmer_s, 0)
              from iterations where run_id = ? and iteration >= 1"""


def measured(store: str, run_id: str, tasks: int, workers: int, wall: float, load: float) -> dict:
    from evoci.settings import location
    from evoci.store import reading

    with reading(location(store), run_id=run_id) as con:
        overheads = [r[0] for r in con.execute(OVERHEAD, [run_id]).fetchall()]
        done = con.execute("select count(*) from tasks where run_id = ? and status = 'done'", [run_id]).fetchone()[0]
        flow_s = con.execute("select epoch(finished_at) - epoch(created_at) from runs where run_id = ?",
                             [run_id]).fetchone()[0]
    return {"lost": tasks - done, "iterations": len(overheads), "wall_s": wall, "flow_s": flow_s or float("nan"),
            "median": statistics.median(overheads) if overheads else float("nan"),
            "p90": scale._p90(overheads) if overheads else float("nan"),
            "per_worker": len(overheads) / (flow_s or float("nan")) / workers, "load": load}


def on_pool(state: Path, api: str, store: str, dataset: Path, concurrency: int, workers: int,
            iterations: int, tasks: int) -> dict:
    name = f"scale-{workers}w-{concurrency}"
    client_env = demo.quiet_env(PREFECT_API_URL=api, PREFECT_HOME=str(state / "client-prefect"))
    subprocess.run([EVOCI, "deploy", "--pool", name, "--name", name, "--store", store, "--max-iterations",
                    str(iterations)], env=client_env, check=True, stdout=subprocess.DEVNULL)
    started = []
    for w in range(workers):
        home = state / name / f"worker-{w + 1}"
        home.mkdir(parents=True)
        env = demo.quiet_env(PREFECT_API_URL=api, PREFECT_HOME=str(home / "prefect"), EVOCI_HOME=str(home / "evoci"))
        started.append(subprocess.Popen([PREFECT, "worker", "start", "--pool", name, "--name", f"{name}-{w + 1}",
                                         "--limit", str(max(1, concurrency // workers))],
                                        stdout=open(home / "worker.log", "w"), stderr=subprocess.STDOUT, env=env,
                                        cwd=home, start_new_session=True))
    try:
        load, start = scale.LoadSampler(), time.monotonic()
        with load:
            subprocess.run([EVOCI, "run", str(dataset), "--store", store, "--home", str(state / name / "parent"),
                            "--task-deployment", f"evolve/{name}", "--concurrency", str(concurrency),
                            "--max-iterations", str(iterations), "--run-id", name], env=client_env,
                           stdout=open(state / f"{name}.log", "w"), stderr=subprocess.STDOUT)
        return measured(store, name, tasks, workers, time.monotonic() - start, load.mean())
    finally:
        for proc in started:
            demo.stop(proc)


def embedded(state: Path, dataset: Path, concurrency: int, iterations: int, tasks: int) -> dict:
    home = state / f"embedded-{concurrency}"
    (home / "prefect").mkdir(parents=True)
    name = f"embedded-{concurrency}"
    load, start = scale.LoadSampler(), time.monotonic()
    with load:
        subprocess.run([EVOCI, "run", str(dataset), "--home", str(home), "--concurrency", str(concurrency),
                        "--max-iterations", str(iterations), "--run-id", name],
                       env=demo.quiet_env(PREFECT_HOME=str(home / "prefect")), stdout=open(state / f"{name}.log", "w"),
                       stderr=subprocess.STDOUT)
    return measured(str(home / "evoci.duckdb"), name, tasks, 1, time.monotonic() - start, load.mean())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 16, 32])
    parser.add_argument("--tasks-per-slot", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the state folder (logs, homes) afterwards")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from evoci.swe_ci.demo.generated import write_dataset

    state = Path(tempfile.mkdtemp(prefix="evoci-scale-cluster-"))
    pg_state, server = state / "postgres", None
    worst_lost = 0
    try:
        up = subprocess.run(["bash", str(REPO / "scripts/postgres.sh"), "up", str(pg_state), str(demo.free_port())],
                            capture_output=True, text=True, check=True)
        urls = dict(line.split("=", 1) for line in up.stdout.split())
        port = demo.free_port()
        api = f"http://127.0.0.1:{port}/api"
        server = subprocess.Popen([EVOCI, "server", "--port", str(port), "--database", urls["prefect"],
                                   "--prefect-home", str(state / "prefect-server")],
                                  stdout=open(state / "prefect-server.log", "w"), stderr=subprocess.STDOUT,
                                  env=demo.quiet_env(), start_new_session=True)
        demo.wait_healthy(api, server)
        print("| concurrency | where | tasks | lost | iterations | wall s | flow s | "
              "overhead/iteration median (p90) s | iterations/s per worker | load avg |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for concurrency in args.concurrency:
            tasks = concurrency * args.tasks_per_slot
            dataset = write_dataset(state / f"tasks-{concurrency}", tasks, args.iterations)
            rows = [("embedded (DuckDB file, SQLite server)",
                     embedded(state, dataset, concurrency, args.iterations, tasks))]
            for workers in (1, 2):
                rows.append((f"{workers} worker(s), PostgreSQL",
                             on_pool(state, api, urls["store"], dataset, concurrency, workers, args.iterations, tasks)))
            for where, r in rows:
                worst_lost = max(worst_lost, r["lost"])
                print(f"| {concurrency} | {where} | {tasks} | {r['lost']} | {r['iterations']} | {r['wall_s']:.1f} | "
                      f"{r['flow_s']:.1f} | {r['median']:.3f} ({r['p90']:.3f}) | {r['per_worker']:.3f} | "
                      f"{r['load']:.1f} |", flush=True)
    finally:
        if server is not None:
            demo.stop(server)
        subprocess.run(["bash", str(REPO / "scripts/postgres.sh"), "down", str(pg_state)], capture_output=True)
        if args.keep or worst_lost:
            print(f"state kept in {state}")
        else:
            shutil.rmtree(state, ignore_errors=True)
    return 1 if worst_lost else 0


if __name__ == "__main__":
    sys.exit(main())
