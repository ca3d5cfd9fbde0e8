"""Serving deployments in tests: `evoci serve` as a user starts it, and the waits around it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(process: subprocess.Popen, grace_s: float = 20) -> None:
    """SIGTERM the process group, then SIGKILL what is left after ``grace_s``."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)  # flow-run subprocesses share the group
    except ProcessLookupError:
        pass
    process.wait()


def wait_for(what: str, check, timeout_s: float, every_s: float = 0.5):
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out after {timeout_s:.0f} s waiting for {what}"
        time.sleep(every_s)


def serve(api: str, folder: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start ``evoci serve`` and wait until its deployments exist."""
    folder.mkdir(parents=True, exist_ok=True)
    clean = {k: v for k, v in os.environ.items() if k not in ("EVOCI_INJECT_FAULTS", "EVOCI_HOME", "EVOCI_DB")}
    log = open(folder / "serve.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "evoci.cli", "serve", *args, "--api", api, "--poll-seconds", "1"],
                               env={**clean, "PREFECT_API_URL": api, **(env or {})}, cwd=folder, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    name = args[args.index("--name") + 1]

    def deployed():
        assert process.poll() is None, (folder / "serve.log").read_text()[-3000:]
        response = httpx.get(f"{api}/deployments/name/benchmark/{name}", timeout=5)
        return response.status_code == 200

    wait_for(f"deployment benchmark/{name}", deployed, 90)
    return process
