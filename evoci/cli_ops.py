"""Commands for operating evoci from the Prefect UI.

    evoci server [--port 4200] [--database URL]
                                          start a Prefect server with its UI (SQLite, or PostgreSQL)
    evoci serve [DATASET] [--cron CRON]   serve the benchmark (scheduled) and evolve deployments
    evoci retry FLOW_RUN_ID               retry a failed deployment run, as the UI's Retry button does
    evoci store copy SOURCE TARGET        carry results between stores (a DuckDB file ↔ PostgreSQL)
    evoci deploy --pool POOL --store URL  register the deployments on a work pool, for workers on any host
"""

from __future__ import annotations

import argparse
import os
import sys

from evoci.cli_common import run_config, run_options

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4200


# The Prefect server's own connections to PostgreSQL. Its default pool (5, and 10 more on demand,
# 30 s to wait for one) answered 500 to 506 requests (`QueuePool limit of size 5 overflow 10
# reached`) in two runs of 32 tasks on a work pool, and 6 of their 64 tasks were never started.
# 60 at most stays well under scripts/postgres.sh's max_connections (200) and PostgreSQL's default (100).
SERVER_POOL = {"PREFECT_SERVER_DATABASE_SQLALCHEMY_POOL_SIZE": "20",
               "PREFECT_SERVER_DATABASE_SQLALCHEMY_MAX_OVERFLOW": "40",
               "PREFECT_SERVER_DATABASE_SQLALCHEMY_POOL_TIMEOUT": "60"}


def server_command(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> list[str]:
    return [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]


def server_env(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, prefect_home: str | None = None,
               base: dict[str, str] | None = None, database: str | None = None) -> dict[str, str]:
    """The environment of ``prefect server start``: quiet, and a UI that calls this server's API.

    ``--port`` alone leaves the UI calling port 4200 (its API URL comes from these settings).
    ``database`` (``postgresql+asyncpg://…``) puts the server's state in PostgreSQL instead of
    SQLite: SQLite answers 503 from 4 concurrent subflows, PostgreSQL took 128 with no error.
    """
    env = dict(os.environ if base is None else base)
    env.update({"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "PREFECT_SERVER_API_HOST": host, "PREFECT_SERVER_API_PORT": str(port),
                "PREFECT_UI_API_URL": f"http://{host}:{port}/api"})
    env.pop("PREFECT_API_URL", None)  # the server's own client talks to itself
    if prefect_home:
        env["PREFECT_HOME"] = os.path.abspath(prefect_home)
    if database:
        env["PREFECT_API_DATABASE_CONNECTION_URL"] = prefect_database_url(database)
        for name, value in SERVER_POOL.items():  # a value the user set wins
            env.setdefault(name, value)
    return env


def prefect_database_url(url: str) -> str:
    """A PostgreSQL URL as Prefect's server wants it (the asyncpg driver named); SQLAlchemy URLs pass through."""
    from evoci.errors import InputError

    for scheme in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+asyncpg://" + url[len(scheme):]
    raise InputError(f"--database {url!r} is not a PostgreSQL URL — give postgresql://USER@HOST:PORT/DB "
                     "(`bash scripts/postgres.sh up` starts one and prints it)")


def cmd_server(args: argparse.Namespace) -> int:
    from evoci.store.postgres import redacted

    command = server_command(args.host, args.port)
    env = server_env(args.host, args.port, args.prefect_home, database=args.database)
    state = (f"PostgreSQL at {redacted(args.database)}" if args.database
             else f"SQLite under {env.get('PREFECT_HOME', '~/.prefect')}")
    print(f"evoci: starting {' '.join(command[2:])} — UI at http://{args.host}:{args.port}, "
          f"API at http://{args.host}:{args.port}/api ({state})", file=sys.stderr)
    sys.stderr.flush()
    os.execve(command[0], command, env)  # replaces this process: Ctrl-C and SIGTERM reach the server
    return 0  # not reached


def api_url(explicit: str | None = None) -> str:
    """The Prefect API to use: --api, else PREFECT_API_URL (environment or profile), else the local default."""
    from prefect.settings import PREFECT_API_URL

    return (explicit or PREFECT_API_URL.value() or f"http://{DEFAULT_HOST}:{DEFAULT_PORT}/api").rstrip("/")


def require_server(url: str) -> None:
    """Fail with a plain message unless a Prefect server answers at ``url``."""
    import httpx

    from evoci.errors import InputError

    try:
        healthy = httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        healthy = False
    if not healthy:
        raise InputError(f"no Prefect server answers at {url} — start one with `evoci server` in another terminal "
                         "(or point PREFECT_API_URL at yours)")


def cmd_serve(args: argparse.Namespace) -> int:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from evoci.deployments.serve import BENCHMARK, CONTINUAL, EVOLVE, SWE_EVO, serve_deployments

    url = api_url(args.api)
    require_server(url)
    cron = None if args.no_schedule else args.cron
    ui = url.removesuffix("/api")
    benchmark, evolve, evo, cl = ((f"benchmark/{args.name}", f"evolve/{args.name}", f"swe_evo/{args.name}",
                                   f"continual/{args.name}") if args.name else (BENCHMARK, EVOLVE, SWE_EVO, CONTINUAL))
    print(f"evoci: serving {benchmark} ({'cron ' + cron if cron else 'no schedule'}, dataset {args.dataset}), "
          f"{evolve}, {evo}, {cl} and nitr/{args.name or 'on-demand'} on {ui} — Ctrl-C stops (and pauses the schedule)",
          file=sys.stderr)
    with temporary_settings(updates={PREFECT_API_URL: url}):
        serve_deployments(dataset=args.dataset, config=run_config(args), cron=cron, timezone=args.timezone,
                          home=args.home, db=args.db, name=args.name, limit=args.limit, poll_seconds=args.poll_seconds)
    return 0


def cmd_deploy(args: argparse.Namespace) -> int:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from evoci.deployments.serve import deploy_to_pool
    from evoci.errors import InputError
    from evoci.store.postgres import is_postgres

    if not is_postgres(args.db or ""):
        raise InputError("deployments on a work pool need a results store that every worker writes: give "
                         "--store postgresql://… (`bash scripts/postgres.sh up` starts one)")
    url = api_url(args.api)
    require_server(url)
    with temporary_settings(updates={PREFECT_API_URL: url}):
        names = deploy_to_pool(args.pool, store=args.db, name=args.name, dataset=args.dataset, config=run_config(args))
    print(f"evoci: registered {', '.join(names)} on work pool {args.pool!r}; start a worker on each host with "
          f"`EVOCI_HOME=<its folder> prefect worker start --pool {args.pool} --limit <tasks at once>`, then "
          f"`evoci run DATASET --store … --task-deployment FLOW/{args.name}` (FLOW: evolve for SWE-CI, "
          "swe_evo_instance for SWE-EVO, nitr_probe_by_id for NITR, continual_sequence for SWE-Bench-CL)")
    return 0


def cmd_retry(args: argparse.Namespace) -> int:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from evoci.deployments.retry import retry_flow_run

    url = api_url(args.api)
    require_server(url)
    with temporary_settings(updates={PREFECT_API_URL: url}):
        retry_flow_run(args.flow_run_id)
    print(f"evoci: flow run {args.flow_run_id} is AwaitingRetry; the serving process re-runs what did not complete")
    return 0


def cmd_store_copy(args: argparse.Namespace) -> int:
    from evoci.store.copy import copy_store
    from evoci.store.db import describe
    from evoci.settings import location

    copied = copy_store(args.source, args.target)
    for item in copied:
        print(f"{item.table}: {item.rows} row(s)")
    print(f"evoci: {sum(c.rows for c in copied)} row(s) of {len(copied)} table(s) copied from "
          f"{describe(location(args.source))} to {describe(location(args.target))} (rows the target already "
          "held were kept as they were)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from evoci.deployments.serve import NIGHTLY

    server = sub.add_parser("server", help="start a local Prefect server and its UI (SQLite; Ctrl-C stops it)")
    server.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    server.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    server.add_argument("--prefect-home", help="Prefect's folder, holding the SQLite database (default: $PREFECT_HOME or ~/.prefect)")
    server.add_argument("--database", metavar="URL", help="keep the server's state in PostgreSQL (postgresql://…) "
                        "instead of SQLite: for many concurrent runs or several hosts' workers")
    server.set_defaults(func=cmd_server)

    deploy = sub.add_parser("deploy", help="register the deployments on a work pool, for workers on any host")
    deploy.add_argument("dataset", nargs="?", default="demo", help="the benchmark deployment's dataset (default: demo)")
    deploy.add_argument("--pool", required=True, help="a `process` work pool (created if missing)")
    deploy.add_argument("--name", default="pool", help="the deployments' name: evolve/NAME, benchmark/NAME, … (default: pool)")
    deploy.add_argument("--api", help="Prefect API URL (default: $PREFECT_API_URL or http://127.0.0.1:4200/api)")
    run_options(deploy)  # its --store is the PostgreSQL results store every worker writes
    deploy.set_defaults(func=cmd_deploy)

    store = sub.add_parser("store", help="manage results stores").add_subparsers(dest="store_command", required=True)
    copy = store.add_parser("copy", help="copy every result of one store into another (idempotent)")
    copy.add_argument("source", help="a DuckDB results file, or a PostgreSQL URL (postgresql://…)")
    copy.add_argument("target", help="a DuckDB results file (created if missing), or a PostgreSQL URL")
    copy.set_defaults(func=cmd_store_copy)

    serve = sub.add_parser("serve", help="serve the benchmark (on a cron schedule) and evolve deployments to a Prefect server")
    serve.add_argument("dataset", nargs="?", default="demo", help="the scheduled deployment's dataset: `demo`, a JSONL file, or a NITR source (`nitr`, `nitr:<path>`) (default: demo)")
    serve.add_argument("--cron", default=NIGHTLY, help=f"when the benchmark runs (default: {NIGHTLY!r}, 02:00 every day)")
    serve.add_argument("--timezone", help="the cron's time zone, e.g. Europe/Berlin (default: UTC)")
    serve.add_argument("--no-schedule", action="store_true", help="no schedule: runs start only when triggered")
    serve.add_argument("--name", help="name both deployments benchmark/NAME and evolve/NAME (default: benchmark/nightly, "
                                      "evolve/on-demand); lets several serve processes share a server")
    serve.add_argument("--limit", type=int, help="most flow runs at once (default: Prefect's, 5)")
    serve.add_argument("--poll-seconds", type=float, help="how often to look for runs to start (default: Prefect's, 10)")
    serve.add_argument("--api", help="Prefect API URL (default: $PREFECT_API_URL or http://127.0.0.1:4200/api)")
    run_options(serve)
    serve.set_defaults(func=cmd_serve)

    retry = sub.add_parser("retry", help="retry a failed deployment run as the UI's Retry button does")
    retry.add_argument("flow_run_id")
    retry.add_argument("--api", help="Prefect API URL (default: $PREFECT_API_URL or http://127.0.0.1:4200/api)")
    retry.set_defaults(func=cmd_retry)
