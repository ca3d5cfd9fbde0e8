"""The Sandbox interface: the only way agents and the test node reach a workspace.

A sandbox wraps one task's workspace directory. Paths given to ``read_file``,
``write_file`` and ``exec(cwd=...)`` are relative to the workspace root; absolute
paths and ``..`` escapes are refused; ``write_file`` never writes through a link and
``read_file`` reads only a regular file inside the workspace (``read_inside``, ``write_inside``).
Command failure is data (``ExecResult``);
a sandbox that cannot do its job raises ``SandboxError`` (an infrastructure error).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from evoci import treefs

# Output beyond this many bytes per stream is dropped (head and tail are kept).
DEFAULT_OUTPUT_LIMIT = 1_000_000
# The private tmpfs of an ephemeral sandbox (bubblewrap or Docker) for the harness's own files.
REPORT_DIR = "/evoci-report"
REPORT_DIR_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Layout:
    """Where commands see the root, and as whom they run.

    The default is evoci's own: the root at ``/workspace``, commands as the sandbox's user.
    ``TESTBED`` is the SWE-bench images' (the repository at ``/testbed``, tests run as ``root``):
    records graded the SWE-bench way name tests by it (a test parametrized with the working
    folder or ``getpass.getuser()``), so their grading runs there. Root is the sandbox's own
    (uid 0 of the bubblewrap sandbox's user namespace, or of a container with every capability
    dropped): no power over the host. The unisolated ``host`` sandbox runs in place and ignores it.

    ``silent_network``: addresses beyond the sandbox's own loopback do not answer instead of being
    unreachable (``evoci.sandbox.silent``): a connection to another host waits for its timeout, as
    the tests of connect timeouts expect; nothing leaves the sandbox either way. Only with
    ``as_root`` (a container needs its one capability at start to set the route up).
    """

    root: str = "/workspace"
    as_root: bool = False
    silent_network: bool = False

    def __post_init__(self) -> None:
        if self.silent_network and not self.as_root:
            raise ValueError("a silent network is set up as the sandbox's root: give the layout as_root")

    @property
    def identity(self) -> str:
        """For cache keys and records: outcomes graded under another layout are not the same."""
        return f"{self.root}{' as root' if self.as_root else ''}{' silent network' if self.silent_network else ''}"


WORKSPACE = Layout()
TESTBED = Layout(root="/testbed", as_root=True)


@dataclass(frozen=True)
class ExecResult:
    """What a command did. ``exit_code`` is None when it was killed at the timeout or for going over
    its workspace budget (``evoci.sandbox.budget``)."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    truncated: bool = False  # stdout or stderr went over the output limit
    over_budget: bool = False  # it wrote more into the workspace than its budget allows (and was killed)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.over_budget


@runtime_checkable
class Sandbox(Protocol):
    """A workspace plus an environment in which its commands run."""

    @property
    def workspace(self) -> Path:
        """The workspace directory on the host (the git work tree evoci commits)."""
        ...

    @property
    def report_dir(self) -> str:
        """A folder, as commands see it, where the harness's own files go: on an ephemeral
        sandbox a private tmpfs the code under test does not share with its /tmp."""
        ...

    @property
    def visible_root(self) -> str:
        """The workspace's path as commands in the sandbox see it (``/workspace`` when isolated)."""
        ...

    @property
    def tree_capacity(self) -> int | None:
        """How big a tree an ephemeral sandbox copies and still has room for what its tests write
        (three quarters of ``tree_bytes``: ``evoci.sandbox.budget.ceiling_of``); None when unbounded."""
        ...

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        timeout: float,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
    ) -> ExecResult:
        """Run ``cmd`` in the task's environment; kill everything it started at ``timeout``."""
        ...

    def read_file(self, path: str) -> bytes:
        """Read a workspace file; FileNotFoundError when it does not exist."""
        ...

    def write_file(self, path: str, content: bytes | str) -> None:
        """Create or replace a workspace file, creating parent folders."""
        ...

    def cleanup(self) -> None:
        """Release everything the sandbox holds (processes, containers). Idempotent."""
        ...


def resolve_inside(root: Path, path: str) -> Path:
    """``root / path``, refusing absolute paths and ``..`` escapes."""
    if Path(path).is_absolute():
        raise ValueError(f"path {path!r} must be relative to the workspace root")
    full = (root / path).resolve()
    root = root.resolve()
    if full != root and root not in full.parents:
        raise ValueError(f"path {path!r} escapes the workspace")
    return full


def read_inside(root: Path, path: str) -> bytes:
    """The regular file ``path`` of the workspace (links resolved, but never out of it).

    A link that leads out of the workspace, a FIFO (which would block the harness), a device or a
    folder reads as no file (``evoci.treefs.NotAFile``, a ``FileNotFoundError``).
    """
    if Path(path).is_absolute() or ".." in Path(path).parts:
        raise ValueError(f"path {path!r} must be relative to the workspace root, without '..'")
    try:
        full = resolve_inside(root, path)
    except ValueError:
        raise treefs.NotAFile(errno.ENOENT, f"{path} leads out of the workspace") from None
    try:
        handle = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise treefs.NotAFile(errno.ENOENT, f"{path} is not a regular file") from None
        raise
    return treefs.read_open(handle, path)


def write_inside(root: Path, path: str, content: bytes | str) -> None:
    """Create ``path`` afresh in the workspace, never writing through a link (one in the way is removed)."""
    if Path(path).is_absolute() or ".." in Path(path).parts:
        raise ValueError(f"path {path!r} must be relative to the workspace root, without '..'")
    treefs.write_file(root, os.path.normpath(path), content)
