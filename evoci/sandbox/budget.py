"""The workspace budget: how much a command may add to a workspace that is a host folder.

An agent's commands write straight into the task's workspace (bind-mounted, in both sandboxes),
so the disk that holds evoci's home is theirs to fill: per-file and tmpfs caps do not bound the
sum. While a command runs on a workspace that is not ephemeral, ``DiskWatch`` measures the
workspace's disk usage (every entry's ``st_blocks``, but at least its length and one block:
``_sizes``; links never followed) and kills the command
as soon as it exceeds its budget: the usage when the command started plus an allowance
(``workspace_growth_bytes``, a sandbox option). A last measurement when the command ends catches
a command that finished between two polls.

Space a file holds after it was deleted is the disk's as long as a process keeps the file open:
the workspace no longer lists it, yet a command that deletes what it writes and holds it open
could fill the disk past any budget. The watch also charges every deleted regular file on the
workspace's filesystem that one of the command's processes holds open (``held_deleted``: their
``/proc/<pid>/fd``; each file once), where the harness can see the command's processes
(``processes``: the descendants of the local sandbox's command, the processes of a container on
this machine's kernel). Not seen: a descriptor in flight in a socket no process reads (freed when
the command is killed, at its timeout at the latest), and a container of an engine on another
machine (its processes are not this kernel's).

The bound, honestly: the workspace holds at most budget + what the command writes during one
poll interval and one walk. The interval adapts to the tree (``INTERVAL_FACTOR`` times the last
walk's duration, at least ``MIN_INTERVAL_S``), so polling costs a small share of one core however
big the repository is; on a tree of a few thousand files a walk takes milliseconds.

What happens to an agent that went over is the node's business (the work is discarded, the
outcome is the agent's ``limit``): ``overrun`` tells it.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from evoci import treefs

GIB = 1024**3
DEFAULT_GROWTH_BYTES = 2 * GIB
# What an entry costs at least (one block): the allowance then also bounds how many files and
# inodes a command can add (2 GiB: half a million), which st_blocks alone does not for empty files.
ENTRY_BYTES = 4096
MIN_INTERVAL_S = 0.05
INTERVAL_FACTOR = 5.0  # sleep five walks between two walks: polling takes at most a sixth of one core


def disk_usage(root: Path, stop_above: int | None = None) -> int:
    """Bytes the tree at ``root`` is charged (``st_blocks`` × 512, at least each file's length and one
    block: ``_sizes``; links never followed).

    Any depth, one descriptor per walk (``evoci.treefs``'s way: down by name, up through ``..``);
    a folder the command locked is given its owner's permissions back. Entries that vanish while
    the walk runs are skipped; a folder moved under the walk ends it with what was counted (the
    measurement when the command ends sees the tree at rest). ``stop_above``: stop as soon as the
    sum exceeds it (the caller only needs to know that).
    """
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return 0
    total = os.fstat(fd).st_blocks * 512
    try:
        levels = [(_sizes(fd), os.fstat(fd))]  # (subfolders still to enter, the folder's identity)
        total += levels[0][0][1]
        while levels and (stop_above is None or total <= stop_above):
            pending, _ = levels[-1]
            if not pending[0]:
                levels.pop()
                if levels:
                    fd = treefs._climb(fd, levels[-1][1])  # pylint: disable=protected-access
                continue
            name = pending[0].pop()
            try:
                inner = treefs._open_folder(fd, name)  # pylint: disable=protected-access
            except OSError:  # removed, replaced by a link or a file since it was listed
                continue
            os.close(fd)
            fd = inner
            found = _sizes(fd)
            total += os.fstat(fd).st_blocks * 512 + found[1]
            levels.append((found, os.fstat(fd)))
    except OSError:  # a folder was moved while the command ran: what was counted stands
        pass
    finally:
        os.close(fd)
    return total


def _sizes(fd: int) -> tuple[list[str], int]:
    """The subfolders of the open folder ``fd`` and the bytes its other entries are charged.

    An entry is charged the larger of what it occupies, its length and ``ENTRY_BYTES``: a sparse
    file occupies nothing but git reads (and hashes) its whole length, and empty files occupy
    nothing but each takes one of the disk's inodes, of which the host has a fixed number."""
    folders, charged = [], 0
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    folders.append(entry.name)
                else:
                    st = entry.stat(follow_symlinks=False)
                    charged += max(st.st_blocks * 512, st.st_size, ENTRY_BYTES)
            except OSError:  # gone since the listing
                continue
    return folders, charged


def held_deleted(pids: Iterable[int], device: int) -> int:
    """Bytes of the deleted regular files on ``device`` that the processes ``pids`` hold open, each file once.

    ``/proc/<pid>/fd/<n>`` opens to the file itself even when no folder lists it any more
    (``st_nlink`` 0). Processes and descriptors that go away while they are read are skipped.
    """
    seen: set[int] = set()
    total = 0
    for pid in pids:
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # gone, or not this kernel's
            continue
        for fd in descriptors:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if st.st_nlink == 0 and stat.S_ISREG(st.st_mode) and st.st_dev == device and st.st_ino not in seen:
                seen.add(st.st_ino)
                total += max(st.st_blocks * 512, st.st_size)
    return total


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (the parent links of ``/proc/<n>/stat``).

    A sandboxed command's orphans stay below it: bubblewrap's PID namespace reparents them to its
    own first process, a container's to the container's.
    """
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read()
        except OSError:
            continue
        # the command's name, in parentheses, may hold spaces and parentheses: parse after the last ')'
        fields = text[text.rfind(b")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(name))
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(current, ()))
    return found


def size_text(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it whole or one decimal (2 GiB, 64 MiB)."""
    for unit, scale in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


class DiskWatch:
    """Kill a command when its workspace grows past ``allowance`` bytes (see the module docstring).

    Made before the command starts (it measures the workspace then); ``start(kill)`` once the
    command runs; ``stop()`` when it ended, which measures once more. ``exceeded`` says whether
    the budget was passed.
    """

    def __init__(self, root: Path, allowance: int, ceiling: int | None = None):
        self.root = Path(root)
        started = time.monotonic()
        usage = disk_usage(self.root)
        # The budget is per command, so a workspace kept under it command after command could
        # outgrow what a test run can hold (``ceiling``, the grading tree's tmpfs): its copy then
        # failed, an infrastructure error the agent caused. Growth stops at the ceiling too.
        self.capped = ceiling is not None and usage < ceiling and ceiling - usage < allowance
        self.ceiling = ceiling
        self.allowance = ceiling - usage if self.capped else allowance  # type: ignore[operator]
        self.limit = usage + self.allowance
        self._interval = _interval(time.monotonic() - started)
        self.exceeded = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._device = os.stat(self.root).st_dev if self.root.is_dir() else None
        self._processes: Callable[[], Iterable[int]] = tuple

    def start(self, kill: Callable[[], None], processes: Callable[[], Iterable[int]] = tuple) -> None:
        """Watch until ``stop()``; ``kill`` the command when it goes over. ``processes``: the command's
        processes as this kernel numbers them, whose deleted-but-open files count too."""
        self._processes = processes
        self._thread = threading.Thread(target=self._watch, args=(kill,), name="evoci-disk-watch", daemon=True)
        self._thread.start()

    def usage(self) -> int:
        """The workspace's usage now, with the deleted files the command's processes hold open."""
        usage = disk_usage(self.root, stop_above=self.limit)
        if usage <= self.limit and self._device is not None:
            usage += held_deleted(self._processes(), self._device)
        return usage

    def _watch(self, kill: Callable[[], None]) -> None:
        while not self._done.wait(self._interval):
            started = time.monotonic()
            if self.usage() > self.limit:
                self.exceeded = True
                kill()
                return
            self._interval = _interval(time.monotonic() - started)

    def stop(self) -> bool:
        """Stop watching; True when the workspace went over its budget (now or while the command ran).
        Idempotent: only the first call measures."""
        if self._done.is_set():
            return self.exceeded
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        if not self.exceeded and disk_usage(self.root, stop_above=self.limit) > self.limit:
            self.exceeded = True
        return self.exceeded

    def note(self) -> str:
        """What the command's stderr gains when it went over."""
        if self.capped:
            return (f"\n[evoci: the command grew the workspace past {size_text(self.ceiling)}, what a test run "
                    "can hold (three quarters of tree_bytes), and was killed]\n")
        return (f"\n[evoci: the command wrote more than {size_text(self.allowance)} into the workspace "
                "(workspace_growth_bytes) and was killed]\n")


def ceiling_of(tree_bytes: int) -> int:
    """How big a workspace may grow, for a test run's tree (``tree_bytes``) to hold it: three quarters,
    the rest for what the tests write where they run."""
    return tree_bytes * 3 // 4


def _interval(walk_s: float) -> float:
    return max(MIN_INTERVAL_S, INTERVAL_FACTOR * walk_s)


def overrun(sandbox: object) -> int | None:
    """The allowance a command of ``sandbox`` went over since it was opened (or ``forget``), else None."""
    return getattr(sandbox, "budget_overrun", None)


def forget(sandbox: object) -> None:
    """The workspace was put back (a fresh attempt): earlier overruns no longer concern it."""
    if hasattr(sandbox, "budget_overrun"):
        sandbox.budget_overrun = None  # type: ignore[attr-defined]


def discarded(allowance: int) -> str:
    """The agent's outcome message when its work was discarded for going over the budget."""
    return f"the agent wrote more than {size_text(allowance)} into the workspace; its work was discarded"
