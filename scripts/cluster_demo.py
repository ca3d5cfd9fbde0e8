"""A cluster on one machine: PostgreSQL, a Prefect server on it, two workers; one run's tasks spread over both.

    .venv/bin/python scripts/cluster_demo.py [--tasks 4] [--iterations 3] [--kill-worker] [--keep]
    .venv/bin/python scripts/cluster_demo.py --protocol swe-evo|nitr|swe-bench-cl [--workers 1]

1. starts PostgreSQL (``scripts/postgres.sh``) and a Prefect server whose state is in it;
2. registers evoci's deployments on a ``process`` work pool (``evoci deploy``);
3. starts two workers, each with its own evoci home and Prefect home (two "hosts"); worker-2 in
   its own network namespace (``unshare --net``) where only loopback exists and the Prefect API
   and PostgreSQL are reached through Unix-socket bridges (``--no-netns`` leaves it out); like an
   air-gapped host it installs the tasks' packages from a wheelhouse downloaded for it first;
4. runs a dataset of generated tasks with ``--task-deployment``: every task is a flow run that
   either worker may take; every fact goes to the PostgreSQL store;
5. prints which worker ran each task (the home that holds its workspace);
6. runs the same dataset on the embedded default (a DuckDB file, tasks as threads) and checks
   that every table holds the same number of rows and the views give the same numbers;
7. stops everything it started. Exits non-zero on any difference, or if a worker ran nothing.

``--protocol`` runs another protocol's demo the same way, one unit per flow run: SWE-EVO's
instances (``swe-evo-demo``, gold patches), NITR's probes (two built-in probes, the reference
agent), SWE-Bench-CL's sequences (``swe-bench-cl-demo``, gold patches); each worker builds the
demo in its own home. ``--workers 1`` starts only worker-1.

``--kill-worker`` loses a host mid-run: once worker-1 holds a task's lease (it is evolving that
task), worker-1 and every process under it (the flow run, its sandboxes) get SIGKILL, and
worker-1 is started again with the same home. The run's process sees the task's lease expire,
marks the flow run Crashed and queues the task again (``evoci/deployments/pool.py``); so does a
flow run worker-1 had claimed but not yet started, once it is 90 s without a lease. The run must
still end with every fact once and the embedded default's numbers. Leases last 12 s here
(``EVOCI_LEASE_TTL_S``) so the loss is noticed quickly.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVOCI = str(Path(sys.executable).with_name("evoci"))
PREFECT = str(Path(sys.executable).with_name("prefect"))
POOL, NAME = "evoci-cluster", "cluster"
TABLES = ("runs", "tasks", "targets", "iterations", "test_results", "agent_calls", "trajectories", "failures",
          "gradings", "cl_experiences", "cl_retrievals")


@dataclass(frozen=True)
class Protocol:
    """What the demo runs for one protocol: its dataset and options, the unit flow, the numbers compared."""

    dataset: tuple[str, ...]  # `evoci run` arguments before the store's
    unit_flow: str  # the flow whose deployment runs one unit: `--task-deployment <unit_flow>/cluster`
    compared: str  # a view's numbers, which the cluster and the embedded default must give alike
    unit_of_task: str = "task_id"  # tasks' column naming the unit a task belongs to


PROTOCOLS = {
    "swe-ci": Protocol((), "evolve", "select task_id, iteration, n_passed, round(a, 6) from swe_ci_iterations "
                                     "order by task_id, iteration"),
    "swe-evo": Protocol(("swe-evo-demo", "--agent", "gold"), "swe_evo_instance",
                        "select task_id, task_status, f2p_passed, p2p_passed, resolved, round(fix_rate, 6) "
                        "from swe_evo_instances order by task_id"),
    "nitr": Protocol(("nitr", "--select", "id=001,003", "--agent", "reference"), "nitr_probe_by_id",
                     "select task_id, category from nitr_probes order by task_id"),
    "swe-bench-cl": Protocol(("swe-bench-cl-demo", "--agent", "gold", "--matrix", "core"), "continual_sequence",
                             "select sequence_id, memory_stage, sequence_position, task_id, task_status, attempts, "
                             "resolved_attempts, round(a, 6) from cl_matrix order by all", "sequence_id"),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def quiet_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL": "WARNING",
           "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120"}
    env.pop("EVOCI_STORE", None)
    env.pop("EVOCI_DB", None)
    env.update(extra)
    return env


def say(text: str) -> None:
    print(f"[cluster-demo {time.strftime('%H:%M:%S')}] {text}", flush=True)


def wait_healthy(api: str, proc: subprocess.Popen, timeout_s: float = 180) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Prefect server exited ({proc.returncode})")
        try:
            if httpx.get(f"{api}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise RuntimeError(f"the Prefect server did not answer at {api} within {timeout_s:.0f} s")


def pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (dst, src):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def unix_to_tcp(path: Path, port: int) -> None:
    """Serve the Unix socket ``path`` as a door to 127.0.0.1:``port`` of this namespace, in threads."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(64)

    def serve() -> None:
        while True:
            client, _ = listener.accept()
            upstream = socket.create_connection(("127.0.0.1", port))
            threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=pump, args=(upstream, client), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def inside_netns(argv: list[str]) -> None:
    """In worker-2's network namespace: loopback up, a bridge per door, proof nothing else is reachable, the worker.

    ``argv``: CANARY_PORT (SOCKET PORT)... -- WORKER COMMAND...
    """
    from evoci.gateway import bridge

    cut = argv.index("--")
    canary, doors = int(argv[0]), argv[1:cut]
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for path, port in zip(doors[::2], doors[1::2]):
        listener = bridge.listen(int(port))
        if os.fork() == 0:  # a child serves the door, in the worker's process group: stopped with it
            bridge.serve(listener, path)
        listener.close()
    try:
        socket.create_connection(("127.0.0.1", canary), timeout=3).close()
        print(f"NETNS LEAK: 127.0.0.1:{canary} of the machine is reachable", flush=True)
        sys.exit(3)
    except OSError:
        print(f"network namespace: 127.0.0.1:{canary} of the machine is out of reach; only the doors answer",
              flush=True)
    os.execvp(argv[cut + 1], argv[cut + 1:])


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it, from /proc (a flow run may start its own session)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop())
        todo += children.get(found[-1], [])
    return found


def lease_holders(store: str) -> list[int]:
    """The pids holding a task's lease in the store (workers' flow runs evolving a task)."""
    from evoci.settings import location
    from evoci.store.db import transaction

    with transaction(location(store), wait_s=30) as con:
        return [row[0] for row in con.execute("select pid from leases where task_id <> ''").fetchall()]


def counts_and_numbers(store: str, protocol: Protocol) -> tuple[dict[str, int], list[tuple], dict[str, str]]:
    """Rows per table, the protocol's compared numbers, and the unit of each task (a CL issue's sequence)."""
    from evoci.settings import location
    from evoci.store import reading

    with reading(location(store)) as con:
        counts = {t: con.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}
        units = dict(con.execute(f"select task_id, {protocol.unit_of_task} from tasks").fetchall())
        return counts, con.execute(protocol.compared).fetchall(), units


def units_ran(home: Path, units: dict[str, str]) -> list[str]:
    """The units whose work is in a worker's home: ``runs/<run>/<task>`` (a CL attempt's is ``<task>@<cell>``)."""
    return sorted({units.get(p.name.split("@", 1)[0], p.name) for p in home.glob("runs/*/*") if p.is_dir()})


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM a process started in its own session, and everything in it; SIGKILL after 30 s."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def kill_mid_task(worker: subprocess.Popen, store: str, running: subprocess.Popen, timeout_s: float = 600) -> int:
    """SIGKILL ``worker`` and every process under it once one of them holds a task's lease; how many were killed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and running.poll() is None:
        tree = descendants(worker.pid)
        if set(tree[1:]) & set(lease_holders(store)):
            for pid in tree:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            worker.wait()
            return len(tree)
        time.sleep(0.5)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--limit", type=int, default=2, help="flow runs each worker takes at once")
    parser.add_argument("--keep", action="store_true", help="keep the state folder (logs, homes) afterwards")
    parser.add_argument("--kill-worker", action="store_true",
                        help="SIGKILL worker-1 and its flow runs mid-task, then start it again")
    parser.add_argument("--no-netns", action="store_true", help="run worker-2 in the machine's network namespace")
    parser.add_argument("--protocol", choices=sorted(PROTOCOLS), default="swe-ci",
                        help="swe-ci: --tasks generated tasks; the others: their built-in demo, one unit per flow run")
    parser.add_argument("--workers", type=int, choices=(1, 2), default=2, help="how many workers poll the pool")
    args = parser.parse_args()
    protocol = PROTOCOLS[args.protocol]
    # Short leases and start grace, so the loss is noticed in seconds (a flow run worker-1 had
    # claimed but not started when it died is never started: only the grace finds it).
    lost = ({"EVOCI_LEASE_TTL_S": "12", "EVOCI_POOL_POLL_S": "2", "EVOCI_POOL_START_GRACE_S": "90"}
            if args.kill_worker else {})

    sys.path.insert(0, str(REPO))
    from evoci.swe_ci.demo.generated import write_dataset

    state = Path(tempfile.mkdtemp(prefix="evoci-cluster-"))
    started: list[subprocess.Popen] = []
    pg_state = state / "postgres"
    status = 1
    try:
        say(f"state in {state}")
        up = subprocess.run(["bash", str(REPO / "scripts/postgres.sh"), "up", str(pg_state), str(free_port())],
                            capture_output=True, text=True, check=True)
        urls = dict(line.split("=", 1) for line in up.stdout.split())
        store = urls["store"]
        say(f"PostgreSQL up: results {store}")

        port = free_port()
        api = f"http://127.0.0.1:{port}/api"
        server_log = open(state / "prefect-server.log", "w")
        server = subprocess.Popen([EVOCI, "server", "--port", str(port), "--database", urls["prefect"],
                                   "--prefect-home", str(state / "prefect-server")],
                                  stdout=server_log, stderr=subprocess.STDOUT, env=quiet_env(), start_new_session=True)
        started.append(server)
        wait_healthy(api, server)
        say(f"Prefect server on PostgreSQL at {api}")

        client_env = quiet_env(PREFECT_API_URL=api, PREFECT_HOME=str(state / "client-prefect"), **lost)
        subprocess.run([EVOCI, "deploy", "--pool", POOL, "--name", NAME, "--store", store,
                        "--max-iterations", str(args.iterations)], env=client_env, check=True)

        workers, processes = {}, {}
        # worker-2's "host": a network namespace whose only doors are the API and the store.
        canary = socket.socket()
        canary.bind(("127.0.0.1", 0))
        canary.listen(1)  # a port of the machine that worker-2 must not reach
        doors = [str(canary.getsockname()[1])]
        offline: dict[str, str] = {}
        if not args.no_netns:
            from evoci.sandbox import resolve_environment

            wheels = state / "wheels"  # what an air-gapped host is given: the harness packages, as wheels
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                            "--only-binary", ":all:", "-d", str(wheels), *resolve_environment({}).requirements],
                           check=True)
            offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
            pg_port = int(store.rsplit(":", 1)[1].split("/", 1)[0])
            pg_socket = Path((pg_state / "cluster-dir").read_text().strip()) / f".s.PGSQL.{pg_port}"
            unix_to_tcp(state / "api.sock", port)
            doors += [str(state / "api.sock"), str(port), str(pg_socket), str(pg_port)]

        def start_worker(name: str) -> None:
            home = state / name
            home.mkdir(exist_ok=True)
            log = open(state / f"{name}.log", "a")
            env = quiet_env(PREFECT_API_URL=api, PREFECT_HOME=str(home / "prefect"), EVOCI_HOME=str(home / "evoci"),
                            **lost, **(offline if name == "worker-2" else {}))
            workers[name] = home / "evoci"
            command = [PREFECT, "worker", "start", "--pool", POOL, "--name", name, "--limit", str(args.limit)]
            if name == "worker-2" and not args.no_netns:
                command = ["unshare", "--net", "--map-root-user", "--", sys.executable, __file__, "_netns", *doors,
                           "--", *command]
            processes[name] = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=home,
                                               start_new_session=True)
            started.append(processes[name])

        for name in ("worker-1", "worker-2")[:args.workers]:
            start_worker(name)
        say("one worker polling the pool, with its own home" if args.workers == 1 else
            "two workers polling the pool, each with its own home" +
            ("" if args.no_netns else "; worker-2 in its own network namespace (loopback only; two doors: the API "
                                      "and PostgreSQL, over Unix sockets)"))

        dataset = (protocol.dataset if protocol.dataset else
                   (str(write_dataset(state / "tasks", args.tasks, args.iterations)), "--max-iterations",
                    str(args.iterations)))
        started_at = time.monotonic()
        run_log = state / "run.log"
        with open(run_log, "w") as out:
            running = subprocess.Popen([EVOCI, "run", *dataset, "--store", store, "--home", str(state / "parent"),
                                        "--task-deployment", f"{protocol.unit_flow}/{NAME}", "--concurrency",
                                        str(args.tasks)], env=client_env, stdout=out, stderr=subprocess.STDOUT)
            killed = kill_mid_task(processes["worker-1"], store, running) if args.kill_worker else None
            if killed:
                say(f"worker-1 and {killed - 1} process(es) under it killed (SIGKILL) while it evolved a task; "
                    "starting it again")
                start_worker("worker-1")
            running.wait()
        ran = subprocess.CompletedProcess(running.args, running.returncode)
        said = run_log.read_text()
        print("\n".join(line.rstrip() for line in said.splitlines()), flush=True)
        requeued = said.count("lost its worker")
        say(f"the run across workers took {time.monotonic() - started_at:.1f} s (exit {ran.returncode}); "
            f"{requeued} task(s) queued again after a lost worker")

        cluster_counts, cluster_numbers, units = counts_and_numbers(store, protocol)
        by_worker = {name: units_ran(home, units) for name, home in workers.items()}
        unit = "task" if args.protocol == "swe-ci" else "unit"
        for name, tasks in by_worker.items():
            say(f"{name} ran {len(tasks)} {unit}(s): {', '.join(tasks) or '—'}")

        embedded = state / "embedded"
        (embedded / "prefect").mkdir(parents=True)
        with open(state / "embedded.log", "w") as out:  # kept with the other logs when the demo fails
            subprocess.run([EVOCI, "run", *dataset, "--home", str(embedded), "--concurrency", "2"],
                           env=quiet_env(PREFECT_HOME=str(embedded / "prefect")), stdout=out, stderr=subprocess.STDOUT,
                           check=False)
        embedded_counts, embedded_numbers, _ = counts_and_numbers(str(embedded / "evoci.duckdb"), protocol)
        say(f"rows on the cluster:  {cluster_counts}")
        say(f"rows embedded:        {embedded_counts}")
        problems = []
        if ran.returncode:
            problems.append(f"the run across workers exited {ran.returncode}")
        if any(not tasks for tasks in by_worker.values()):
            problems.append(f"a worker ran no {unit}")
        if not args.no_netns and "is out of reach" not in (state / "worker-2.log").read_text():
            problems.append("worker-2 did not prove its network namespace (see worker-2.log)")
        if cluster_counts != embedded_counts:
            problems.append("the row counts differ (facts lost or doubled)")
        if cluster_numbers != embedded_numbers:
            problems.append("the views give other numbers")
        if args.kill_worker:
            if not killed:
                problems.append("worker-1 never held a task's lease, so nothing was killed mid-task")
            elif not requeued:
                problems.append("the killed worker's task was never queued again")
        elif sorted(sum(by_worker.values(), [])) != sorted(set(units.values())):
            problems.append(f"not every {unit} ran on exactly one worker")
        if not cluster_numbers:
            problems.append("the views hold no numbers for the run")
        for problem in problems:
            say(f"FAILED: {problem}")
        if not problems:
            say(f"OK: {len(set(units.values()))} {unit}s over {args.workers} worker{'s' if args.workers > 1 else ''}, "
                "every fact once, the same numbers as the embedded default")
        status = 1 if problems else 0
    finally:
        for proc in reversed(started):  # workers first, then the server
            stop(proc)
        subprocess.run(["bash", str(REPO / "scripts/postgres.sh"), "down", str(pg_state)], capture_output=True)
        if status and not args.keep:
            say(f"logs kept in {state}")
        elif not args.keep:
            shutil.rmtree(state, ignore_errors=True)
    return status


if __name__ == "__main__":
    if sys.argv[1:2] == ["_netns"]:
        inside_netns(sys.argv[2:])
    sys.exit(main())
