"""Run one command on this machine with a time limit and bounded output.

The command starts in a new session, so it and everything it spawns share one process
group. When the command ends, or is killed at its timeout, the whole group is killed: no
test server, watcher or forgotten ``sleep`` outlives the ``exec`` that started it. (A
process that calls ``setsid()`` itself leaves the group and escapes this; containers do
not have that gap.)

Each output stream keeps at most ``output_limit`` bytes: its first half and its last
half, joined by a line saying how many bytes were dropped. Two threads drain the pipes
as the command writes, so memory stays bounded however much it prints, and a command
that fills one pipe while we read the other cannot deadlock.

With a ``budget`` (``evoci.sandbox.budget.DiskWatch``), the process group is killed as soon as
the workspace grows past it, and the result says ``over_budget``.

Together with the Docker sandbox, this is the only module that imports ``subprocess``.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from evoci import interrupt
from evoci.errors import SandboxError
from evoci.sandbox.base import ExecResult
from evoci.sandbox.budget import DiskWatch, descendants

# Seconds between SIGTERM and SIGKILL when a command is killed at its timeout.
KILL_GRACE_S = 1.0
# Seconds to wait for the output pipes to close after the process group was killed.
_DRAIN_WAIT_S = 5.0
_CHUNK = 64 * 1024


class BoundedCapture:
    """The head and the tail of a byte stream, and how much of its middle was dropped."""

    def __init__(self, limit: int):
        self.head_limit = max(limit, 1) // 2
        self.tail_limit = max(limit, 1) - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.tail_limit
            if excess > 0:
                del self.tail[:excess]  # cheap: bytearray drops its front in O(1)

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def drain(self, fd: int) -> None:
        """Read ``fd`` until end of file (run in a thread)."""
        try:
            while chunk := os.read(fd, _CHUNK):
                self.add(chunk)
        finally:
            os.close(fd)

    def text(self) -> str:
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n[evoci: {self.dropped} bytes of output dropped here]\n{tail}"
        return head + tail


def run_process(
    cmd: Sequence[str],
    *,
    cwd: Path | str,
    env: Mapping[str, str],
    timeout: float,
    output_limit: int,
    budget: DiskWatch | None = None,
) -> ExecResult:
    """Run ``cmd`` in ``cwd`` with exactly ``env``; kill its process group at ``timeout`` seconds, or as
    soon as ``budget`` (made before the call: it measures the workspace first) is exceeded."""
    if not cmd:
        raise ValueError("run_process needs a command, got an empty list")
    interrupt.check()  # a signal asked evoci to stop: start nothing new
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise SandboxError(
            f"could not start {cmd[0]!r} in {cwd}: {exc} — check that the program is installed "
            "in the environment (or on PATH) and that the working folder exists"
        ) from exc

    interrupt.started(proc.pid)
    captures = (BoundedCapture(output_limit), BoundedCapture(output_limit))
    readers = []
    for capture, pipe in zip(captures, (proc.stdout, proc.stderr)):
        fd = os.dup(pipe.fileno())  # the thread owns (and closes) its own descriptor
        pipe.close()
        reader = threading.Thread(target=capture.drain, args=(fd,), daemon=True)
        reader.start()
        readers.append(reader)
    if budget is not None:
        budget.start(lambda: _signal_group(proc.pid, signal.SIGKILL), lambda: descendants(proc.pid))

    timed_out = not _wait_exited(proc.pid, timeout)
    if timed_out:
        _signal_group(proc.pid, signal.SIGTERM)
        _wait_exited(proc.pid, KILL_GRACE_S)
    # The leader is a zombie until proc.wait() below, so its group id cannot be reused yet:
    # killing the group here reaches exactly the processes this command started.
    _signal_group(proc.pid, signal.SIGKILL)
    # Before the leader is reaped: the watch must never signal a group id that could be reused.
    over_budget = budget is not None and budget.stop()
    exit_code = proc.wait()
    interrupt.ended(proc.pid)
    for reader in readers:
        reader.join(_DRAIN_WAIT_S)  # a setsid() escapee may still hold a pipe open
    interrupt.check()  # killed by a signal to evoci: never an outcome of the command

    out, err = captures
    return ExecResult(
        exit_code=None if timed_out or over_budget else exit_code,
        stdout=out.text(),
        stderr=err.text() + (budget.note() if over_budget else ""),  # type: ignore[union-attr]
        duration_s=time.monotonic() - started,
        timed_out=timed_out,
        truncated=bool(out.dropped or err.dropped),
        over_budget=over_budget,
    )


def _wait_exited(pid: int, timeout: float) -> bool:
    """Wait until ``pid`` exits, without reaping it; False if it is still running at ``timeout``.

    A pidfd becomes readable the moment the process exits, so the wait ends then (polling would
    add half its interval to every command: tens of milliseconds per test run).
    """
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here, or the process is already gone
        return _poll_exited(pid, timeout)
    try:
        ready, _, _ = select.select([fd], [], [], max(timeout, 0.0))
        return bool(ready)
    finally:
        os.close(fd)


def _poll_exited(pid: int, timeout: float) -> bool:
    """``_wait_exited`` by polling, where pidfds are not available."""
    deadline = time.monotonic() + timeout
    delay = 0.0005
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:  # already reaped elsewhere: it has certainly exited
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.05)


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass  # every process of the group has already exited
