"""The temporary Prefect server a command starts: stopped with it, and reaped after a ``kill -9``.

With no ``PREFECT_API_URL``, Prefect starts a server process (~200 MB) on the first flow run and
stops it at exit. A command killed with SIGKILL cannot stop it: it stayed alive for good. So
``evoci run`` starts that server itself, before its flow, and records it under Prefect's home
(``evoci-servers/<pid>.json``: the server's and the command's pid and start time). Every later
command stops each recorded server whose command is gone (``reap``); a server whose command still
runs, or a pid reused by another program (its start time differs), is left alone.

The server writes to a log beside its record (``<pid>.log``), never to the command's output: an
orphan holding the command's stdout kept a pipe reading it (``evoci run | tee``) open after a
``kill -9`` until something stopped the server.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

from evoci.store.lease import Owner, me, process_started


def _folder() -> Path:
    from prefect.settings import PREFECT_HOME

    return Path(PREFECT_HOME.value()) / "evoci-servers"


def start() -> None:
    """Stop the servers earlier commands left behind; start Prefect's temporary server for this command and
    record it (no server when an API is configured)."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    for pid in reap():
        print(f"evoci: stopped the temporary Prefect server (pid {pid}) of an evoci command that was killed")
    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()  # the instance Prefect's client takes when no API is configured
    _folder().mkdir(parents=True, exist_ok=True)
    log = _folder() / f"command-{os.getpid()}.log"
    spawn = server._run_uvicorn_command

    def spawn_logged():
        with _stdio_to(log):
            return spawn()

    server._run_uvicorn_command = spawn_logged
    server.start()
    pid = server.server_process.pid
    log = log.rename(log.with_name(f"{pid}.log"))
    owner = me()
    record = _folder() / f"{pid}.json"
    record.write_text(json.dumps({"server_pid": pid, "server_started": str(process_started(pid)),
                                  "owner_pid": owner.pid, "owner_started": str(owner.started)}))
    atexit.register(record.unlink, missing_ok=True)  # registered after Prefect's own stop: runs before it
    atexit.register(log.unlink, missing_ok=True)


@contextlib.contextmanager
def _stdio_to(path: Path):
    """File descriptors 1 and 2 point at ``path`` while the server process is spawned (it inherits them)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(target, 1)
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (target, *saved):
            os.close(fd)


def reap() -> list[int]:
    """Stop every recorded temporary server whose command is gone; return their pids."""
    folder = _folder()
    stopped = []
    for record in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            seen = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        owner = Owner("", me().host, seen["owner_pid"], _when(seen["owner_started"]))
        if owner.alive():
            continue
        server = Owner("", me().host, seen["server_pid"], _when(seen["server_started"]))
        if server.alive():
            _stop(server.pid)
            stopped.append(server.pid)
        record.unlink(missing_ok=True)
        record.with_suffix(".log").unlink(missing_ok=True)
    return stopped


def _when(text: str):
    from datetime import datetime

    return None if text == "None" else datetime.fromisoformat(text)


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            time.sleep(0.1)
            os.kill(pid, 0)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


__all__ = ["reap", "start"]
