"""No container outlives evoci: live-container tracking, signal handlers, and ``prune``.

Each ``DockerSandbox.exec`` removes its container in a ``finally``. What a ``finally`` cannot
cover — SIGTERM (whose default action ends the process at once), a second worker thread's
container when the main thread gets Ctrl-C, interpreter exit — is covered here: every
container this process starts is registered while it lives, and SIGINT/SIGTERM handlers (and
an ``atexit`` hook) remove the registered ones, then hand the signal to whatever handler was
installed before. ``prune`` removes every container labelled ``evoci=1``, from any process
(``evoci sandbox prune``), for after a ``kill -9`` or a power cut.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import threading
import time
from datetime import datetime, timezone

import docker
import docker.errors
import requests

log = logging.getLogger(__name__)

LABEL = "evoci"

_live: dict[str, docker.DockerClient] = {}
_live_guard = threading.Lock()
_previous: dict[int, object] = {}
_installed = False
_exit_hook = False


def register(client: docker.DockerClient, container_id: str) -> None:
    """Track a container this process started, until ``unregister``."""
    global _exit_hook
    with _live_guard:
        _live[container_id] = client
        if not _exit_hook:
            atexit.register(remove_live_containers)
            _exit_hook = True


def unregister(container_id: str) -> None:
    with _live_guard:
        _live.pop(container_id, None)


def live_containers() -> list[str]:
    """Ids of the containers this process started and has not removed yet."""
    with _live_guard:
        return list(_live)


def remove_live_containers() -> list[str]:
    """Force-remove every container this process still holds; their ids."""
    with _live_guard:
        items = list(_live.items())
        _live.clear()
    removed = []
    for container_id, client in items:
        try:
            client.api.remove_container(container_id, force=True)
            removed.append(container_id)
        except docker.errors.NotFound:
            removed.append(container_id)
        except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
            log.warning("could not remove container %s (run `evoci sandbox prune`): %s", container_id[:12], exc)
    return removed


def install_signal_cleanup() -> bool:
    """Install the SIGINT/SIGTERM handlers, once; False off the main thread (Python allows no other).

    ``open_docker_sandbox`` calls this; a program that opens sandboxes only from worker threads
    (a Prefect flow with a thread-pool task runner) should call it once from its main thread.
    """
    global _installed
    if _installed:
        return True
    if threading.current_thread() is not threading.main_thread():
        return False
    for signum in (signal.SIGINT, signal.SIGTERM):
        _previous[signum] = signal.getsignal(signum)
        signal.signal(signum, _on_signal)
    _installed = True
    return True


def _on_signal(signum: int, frame) -> None:
    removed = remove_live_containers()
    if removed:
        log.warning("%s: removed %d live container(s)", signal.Signals(signum).name, len(removed))
    previous = _previous.get(signum)
    if callable(previous):
        previous(signum, frame)  # e.g. Python's SIGINT handler raises KeyboardInterrupt
    elif previous == signal.SIG_DFL or previous is None:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    # SIG_IGN: the process ignored this signal before evoci came; keep ignoring it.


def prune(client: docker.DockerClient, *, older_than: float | None = None, images: bool = False) -> list[str]:
    """Remove every container labelled ``evoci=1`` (optionally only those older than ``older_than`` seconds).

    Containers inherit their image's labels, so this includes any container made from one of
    evoci's images, by evoci or by hand.

    With ``images``, also remove dangling (untagged) evoci images left by interrupted builds.
    Returns the ids of what was removed.
    """
    removed: list[str] = []
    now = time.time()
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        if older_than is not None and now - _created(container.attrs.get("Created", "")) < older_than:
            continue
        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            pass
        removed.append(container.id)
        unregister(container.id)
    if images:
        for image in client.images.list(filters={"label": f"{LABEL}=1", "dangling": True}):
            try:
                client.images.remove(image.id, force=False)
                removed.append(image.id)
            except docker.errors.APIError as exc:
                log.info("kept dangling image %s: %s", image.short_id, exc.explanation)
    return removed


def _created(stamp: str) -> float:
    """Seconds since the epoch of the engine's RFC 3339 time (nanoseconds trimmed); 0 if unreadable."""
    try:
        main, _, frac = stamp.rstrip("Z").partition(".")
        parsed = datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
        return parsed.timestamp() + float(f"0.{frac[:6] or 0}")
    except ValueError:
        return 0.0
