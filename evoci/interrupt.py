"""Stopping on SIGINT and SIGTERM within seconds, every task left recorded and resumable.

Python's default lets Ctrl-C reach only the main thread, while tasks run on worker threads
inside sandbox commands: the current task's whole loop ran on. SIGTERM killed the process
without a word and left the ephemeral Prefect server behind. ``install()`` (the command line
calls it) makes both signals: kill every running sandbox command's process group, refuse to
start new ones or to retry, and raise ``Interrupted`` — in the main thread at once, and in each
worker at its next command or node. Flows record the task as ``interrupted``; the command says
how to resume and exits 128 + the signal's number (130, 143). SIGUSR1 prints every thread's stack
(``faulthandler``) and the run goes on: where a run that seems stuck is waiting.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading

_stop = threading.Event()
_signum = 0
_groups: set[int] = set()  # process groups of the sandbox commands running now
_lock = threading.Lock()
_installed = False


class Interrupted(KeyboardInterrupt):
    """A signal asked evoci to stop. A KeyboardInterrupt, so no ``except Exception`` records it as an outcome."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def install() -> bool:
    """Handle SIGINT and SIGTERM this way; False off the main thread (Python allows no other)."""
    global _installed
    if threading.current_thread() is not threading.main_thread():
        return False
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _on_signal)
    try:  # `kill -USR1 <pid>`: every thread's stack on the process's standard error (where a run waits)
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True)
    except (AttributeError, OSError, ValueError):  # no standard error to write to (it is closed, or none)
        pass
    _installed = True
    return True


def reclaim() -> None:
    """Take SIGTERM back inside a flow the command line runs (a no-op anywhere else).

    Prefect's flow engine puts its own SIGTERM handler in front of ours for the flow's duration:
    it raises in the main thread only and reports the crash to the server before handing the
    signal on, and meanwhile the worker threads ran their tasks on to the end (a SIGTERM'd run
    recorded its task ``done``). Prefect restores our handler when the flow ends. Under a
    deployment's runner ``install`` never ran, so Prefect keeps its cancellation handling.
    """
    if _installed and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_signal)


def _on_signal(signum: int, frame) -> None:
    global _signum
    first = not _stop.is_set()
    _signum = _signum or signum
    _stop.set()
    with _lock:
        groups = list(_groups)
    for pgid in groups:  # the commands die now; their nodes raise Interrupted when they return
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if first:
        raise Interrupted(signum)


def stopping() -> bool:
    return _stop.is_set()


def check() -> None:
    """Raise ``Interrupted`` if a signal asked to stop (called between nodes and around commands)."""
    if _stop.is_set():
        raise Interrupted(_signum or signal.SIGINT)


def sleep(seconds: float) -> None:
    """Wait ``seconds``, or until a signal asks to stop (then raise ``Interrupted``)."""
    _stop.wait(seconds)
    check()


def started(pgid: int) -> None:
    """A sandbox command's process group began: a signal kills it (and ``check`` ends its node)."""
    with _lock:
        _groups.add(pgid)
    if _stop.is_set():  # the signal came while it started
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def ended(pgid: int) -> None:
    with _lock:
        _groups.discard(pgid)


__all__ = ["Interrupted", "check", "ended", "install", "reclaim", "sleep", "started", "stopping"]
