"""Commands for operating evoci from the Prefect UI.

    evoci server [--port 4200]            start a local Prefect server (SQLite) with its UI
    evoci serve [DATASET] [--cron CRON]   serve the benchmark (scheduled) and evolve deployments
    evoci retry FLOW_RUN_ID               retry a failed deployment run, as the UI's Retry button does
"""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4200


def server_command(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> list[str]:
    return [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port)]


def server_env(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, prefect_home: str | None = None,
               base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of ``prefect server start``: quiet, and a UI that calls this server's API.

    ``--port`` alone leaves the UI calling port 4200 (its API URL comes from these settings).
    """
    env = dict(os.environ if base is None else base)
    env.update({"DO_NOT_TRACK": "1", "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
                "PREFECT_SERVER_API_HOST": host, "PREFECT_SERVER_API_PORT": str(port),
                "PREFECT_UI_API_URL": f"http://{host}:{port}/api"})
    env.pop("PREFECT_API_URL", None)  # the server's own client talks to itself
    if prefect_home:
        env["PREFECT_HOME"] = os.path.abspath(prefect_home)
    return env


def cmd_server(args: argparse.Namespace) -> int:
    command = server_command(args.host, args.port)
    env = server_env(args.host, args.port, args.prefect_home)
    print(f"evoci: starting {' '.join(command[2:])} — UI at http://{args.host}:{args.port}, "
          f"API at http://{args.host}:{args.port}/api (SQLite under {env.get('PREFECT_HOME', '~/.prefect')})",
          file=sys.stderr)
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

    from evoci.cli import _config
    from evoci.deployments.serve import BENCHMARK, EVOLVE, SWE_EVO, serve_deployments

    url = api_url(args.api)
    require_server(url)
    cron = None if args.no_schedule else args.cron
    ui = url.removesuffix("/api")
    benchmark, evolve, evo = ((f"benchmark/{args.name}", f"evolve/{args.name}", f"swe_evo/{args.name}") if args.name
                              else (BENCHMARK, EVOLVE, SWE_EVO))
    print(f"evoci: serving {benchmark} ({'cron ' + cron if cron else 'no schedule'}, dataset {args.dataset}), "
          f"{evolve}, {evo} and nitr/{args.name or 'on-demand'} on {ui} — Ctrl-C stops (and pauses the schedule)",
          file=sys.stderr)
    with temporary_settings(updates={PREFECT_API_URL: url}):
        serve_deployments(dataset=args.dataset, config=_config(args), cron=cron, timezone=args.timezone,
                          home=args.home, db=args.db, name=args.name, limit=args.limit, poll_seconds=args.poll_seconds)
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


def register(sub: argparse._SubParsersAction) -> None:
    from evoci.cli import _run_options
    from evoci.deployments.serve import NIGHTLY

    server = sub.add_parser("server", help="start a local Prefect server and its UI (SQLite; Ctrl-C stops it)")
    server.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    server.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default: {DEFAULT_PORT})")
    server.add_argument("--prefect-home", help="Prefect's folder, holding the SQLite database (default: $PREFECT_HOME or ~/.prefect)")
    server.set_defaults(func=cmd_server)

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
    _run_options(serve)
    serve.set_defaults(func=cmd_serve)

    retry = sub.add_parser("retry", help="retry a failed deployment run as the UI's Retry button does")
    retry.add_argument("flow_run_id")
    retry.add_argument("--api", help="Prefect API URL (default: $PREFECT_API_URL or http://127.0.0.1:4200/api)")
    retry.set_defaults(func=cmd_retry)
