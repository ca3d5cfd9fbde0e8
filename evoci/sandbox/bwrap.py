"""Bubblewrap: the isolation of the local sandbox.

Every command the local sandbox runs for an agent or a test goes through ``bwrap`` (Debian's
``bubblewrap``, what Flatpak builds on) with:

- its own user, PID, IPC, UTS, cgroup and **network** namespaces: the code cannot see the
  harness's processes (so not ``/proc/<ppid>/environ``, where the model API key lives), cannot
  signal them, and cannot reach any address of the host's, loopback included (a layout's
  ``silent_network`` routes every other address into the sandbox's own loopback, where it goes
  unanswered: ``evoci.sandbox.silent``);
- a file system made of read-only system folders (``/usr``, a few files of ``/etc``), the
  task's virtualenv and its base interpreter (read-only, at their host paths), a fresh tmpfs
  ``HOME`` and ``/tmp``, and the sandbox root at ``/workspace``. Nothing else exists: not the
  oracle checkout, not other runs' workspaces, not evoci's home, not the user's home;
- resource limits: address space, file size, CPU time and open files through ``prlimit``, and
  the number of processes through a ``pids`` cgroup (``RLIMIT_NPROC`` does not apply to a user
  that is root on the host, so it is only the fallback);
- ``--die-with-parent`` and a PID namespace: when the command ends or is killed, everything it
  started dies with it, ``setsid`` or not.

An **ephemeral** root (the test node's grading tree) is mounted read-only at ``/evoci-src`` and
copied into a size-capped tmpfs at ``/workspace`` before the command starts: the code under test
can write where it runs, but nothing it writes reaches the host (no disk fill, no report
forged next to the harness's files).
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
import uuid
from contextlib import contextmanager
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evoci.errors import InputError
from evoci.sandbox.budget import DEFAULT_GROWTH_BYTES
from evoci.sandbox import silent
from evoci.sandbox.base import REPORT_DIR, REPORT_DIR_BYTES, WORKSPACE, Layout

SANDBOX_ROOT = "/workspace"
SANDBOX_HOME = "/home/evoci"
ROOT_HOME = "/root"  # HOME of a ``Layout.as_root`` sandbox, as in the SWE-bench images
_SOURCE = "/evoci-src"
# The few host files of /etc that programs need (user names, dynamic loader, TLS roots, time zone).
_ETC = ("passwd", "group", "nsswitch.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
        "ssl", "ca-certificates", "ca-certificates.conf", "alternatives", "mime.types", "os-release", "gitconfig")
# The top-level system folders; on merged-/usr systems most are symlinks into /usr.
_SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "opt")
_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))
GIB = 1024**3


class BwrapOptions(BaseModel):
    """Limits and extra mounts of the bubblewrap sandbox (``--sandbox-option KEY=VALUE``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    address_space_bytes: int = Field(8 * GIB, gt=0)
    """Virtual memory per process (RLIMIT_AS): a memory hog gets MemoryError, not the host's OOM killer."""
    file_size_bytes: int = Field(1 * GIB, gt=0)
    """Largest file a command may write (RLIMIT_FSIZE)."""
    cpu_seconds: int = Field(4 * 3600, gt=0)
    """CPU time per process (RLIMIT_CPU); wall time is the caller's timeout."""
    open_files: int = Field(4096, gt=0)
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    pids: int = Field(512, gt=0)
    """Processes and threads at once (pids cgroup)."""
    tmp_bytes: int = Field(1 * GIB, gt=0)
    """Size of the tmpfs at /tmp and of the one at HOME."""
    tree_bytes: int = Field(4 * GIB, gt=0)
    """Size of the tmpfs an ephemeral root is copied into."""
    workspace_growth_bytes: int = Field(DEFAULT_GROWTH_BYTES, gt=0)
    """How much a command may add to a workspace that is a host folder (an agent's): its disk usage
    when the command started plus this. Beyond it the command is killed (``evoci.sandbox.budget``)."""
    ro_paths: tuple[str, ...] = ()
    """Extra host folders made visible read-only at their own paths: an agent CLI's installation.
    Never a folder that holds the workspace, a home or evoci's home (refused)."""


@functools.cache
def available() -> str | None:
    """None when bubblewrap can start a sandbox here, else why not (for the user)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bubblewrap is not installed (Debian: apt-get install bubblewrap)"
    probe = [exe, "--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", *_system_binds(),
             "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    from evoci.sandbox.process import run_process  # process.py is the one place that starts processes

    try:
        done = run_process(probe, cwd=Path("/"), env={"PATH": os.defpath}, timeout=30, output_limit=10_000)
    except Exception as exc:  # noqa: BLE001 - any failure to start means "not available", said in words
        return f"bubblewrap could not start: {exc}"
    if not done.ok:
        return f"bubblewrap cannot create namespaces here: {done.stderr.strip()[:300]}"
    return None


def command(
    cmd: list[str],
    *,
    root: Path,
    cwd: str,
    env: Mapping[str, str],
    read_only: list[Path],
    options: BwrapOptions,
    gateway_dir: str | None = None,
    ephemeral: bool = False,
    shared: Mapping[str, Path] | None = None,
    layout: Layout = WORKSPACE,
) -> list[str]:
    """The argv that runs ``cmd`` isolated, with ``root`` at ``layout.root`` (/workspace) and ``cwd`` relative to it.

    ``gateway_dir`` (a host folder holding the model gateway's socket) is bound read-only at
    ``evoci.gateway.SANDBOX_DIR`` and bridged to 127.0.0.1 of the command's own network namespace
    before the command starts: the one address it can reach. ``shared`` (place in the root → host
    folder) is bound read-only on top of the root. ``layout.as_root``: the command is uid 0 of its
    own user namespace (``--uid 0``), which maps to the harness's user and nothing more, and its
    ``HOME`` is ``/root``.
    """
    from evoci.gateway import endpoint as gateway  # here: evoci.gateway imports the agents, which import sandboxes

    # Started by a root harness, bubblewrap leaves the command every capability of its user namespace,
    # in which the host's root is mapped: it could remount a read-only bind read-write and write the
    # host folder behind it (the environment, the source of a grading tree). Run by anyone else it
    # keeps none. Drop them all, whoever starts it.
    argv = ["bwrap", "--unshare-all", "--unshare-user", "--cap-drop", "ALL", "--die-with-parent", "--new-session"]
    if layout.silent_network:
        # The network namespace is made and routed outside bubblewrap (evoci.sandbox.silent), owned by a
        # user namespace of its own: bubblewrap's nested one, every capability dropped, cannot change it.
        argv.insert(2, "--share-net")
    if layout.as_root:
        argv += ["--uid", "0", "--gid", "0"]
    home, top = sandbox_home(layout), layout.root
    argv += _system_binds()
    # The fresh folders first: a read-only bind below /tmp (an environment under a home in /tmp)
    # must land on top of the tmpfs, not under it.
    # /dev is a tmpfs of its own, sized as the kernel likes (half the RAM): read-only, its devices
    # work as ever, and /dev/shm, the one place in it programs write, gets the /tmp budget.
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(options.tmp_bytes), "--tmpfs", "/dev/shm",
             "--remount-ro", "/dev",
             "--size", str(options.tmp_bytes), "--tmpfs", "/tmp",
             "--size", str(options.tmp_bytes), "--tmpfs", home]  # fmt: skip
    for path in _unique_existing(read_only):
        argv += ["--ro-bind", str(path), str(path)]
    if gateway_dir:
        argv += ["--ro-bind", gateway_dir, gateway.SANDBOX_DIR]
    if ephemeral:
        argv += ["--ro-bind", str(root), _SOURCE, "--size", str(options.tree_bytes), "--tmpfs", top,
                 "--size", str(REPORT_DIR_BYTES), "--tmpfs", REPORT_DIR]
    else:
        argv += ["--bind", str(root), top]
        for place, folder in (shared or {}).items():
            argv += ["--ro-bind", str(folder), f"{top}/{place}"]
    argv += ["--clearenv", *(x for name, value in env.items() for x in ("--setenv", name, value))]
    where = os.path.normpath(os.path.join(top, cwd))
    limits = ["prlimit", f"--as={options.address_space_bytes}", f"--fsize={options.file_size_bytes}",
              f"--cpu={options.cpu_seconds}", f"--nofile={options.open_files}", "--core=0",
              f"--nproc={options.pids}", "--"]  # fmt: skip
    copy = f"cp -a {_SOURCE}/. {top}/ && " if ephemeral else ""
    bridge = f"{gateway.bridge_command()} && " if gateway_dir else ""
    script = f'{copy}{bridge}cd "$0" && exec "$@"'
    argv = [*argv, "--chdir", "/", "--", "/bin/sh", "-c", script, where, *limits, *cmd]
    if layout.silent_network:
        return ["unshare", "--user", "--map-root-user", "--net", "--", *silent.wrap(sys.executable, argv, drop_caps=False)]
    return argv


def sandbox_home(layout: Layout) -> str:
    """The fresh ``HOME`` of a sandbox with ``layout``."""
    return ROOT_HOME if layout.as_root else SANDBOX_HOME


def read_only_for(program: str, search_path: str, *, workspace: Path, installs: tuple[str, ...] = ()) -> list[Path]:
    """Host paths a program needs visible: its installation, never a folder that holds more.

    A program in a system folder or in one of ``installs`` (declared installation folders) needs
    nothing more; in a virtualenv, that virtualenv and its base interpreter; anywhere else (a
    project's ``bin/``, ``~/bin``, ``/tmp``) only the program file itself — its folder may hold
    runs, results, the oracle or a home. A relative path with a slash is the workspace's
    (``InputError`` when it is not there); an installation that holds the workspace or a home is
    refused with ``InputError``.
    """
    if "/" in program and not os.path.isabs(program):
        if not (workspace / program).is_file():
            raise InputError(f"the program {program!r} is a relative path, looked up in the workspace, and the "
                             "workspace has no such file — give the absolute path of its installation")
        return []
    found = program if os.path.isabs(program) else shutil.which(program, path=search_path)
    if not found:
        return []
    exe, real = Path(os.path.abspath(found)), Path(os.path.realpath(found))
    if all(_within(p, (*_system_roots(), *map(Path, installs))) for p in (exe, real)):
        return []
    for candidate in (exe.parent.parent, real.parent.parent):
        if (candidate / "pyvenv.cfg").is_file():
            refuse_install(candidate, workspace)
            return [candidate, *venv_base(candidate)]
    return [exe] if exe == real else [exe, real]


def refuse_install(path: Path, workspace: Path) -> None:
    """``InputError`` when ``path`` may not be mounted as an installation: it holds (or is) the
    workspace's folders (runs, results, the oracle), a home, or evoci's files."""
    path = Path(os.path.realpath(path))
    homes = {Path(os.path.realpath(h)) for h in (os.path.expanduser("~"), "/root", "/home") if h}
    reasons = []
    if Path(os.path.realpath(workspace)).is_relative_to(path):
        reasons.append("it holds the workspace and the run's other folders (the oracle among them)")
    if any(home.is_relative_to(path) for home in homes):
        reasons.append("it is or holds a home folder")
    # An installation evoci made in its tools folder (it holds its marker file) is only that CLI.
    evoci_install = (path / "evoci-install.json").is_file()
    if not evoci_install and any((p / "evoci.duckdb").exists() or p.name == ".evoci" for p in (path, *path.parents)):
        reasons.append("it is inside evoci's home (runs and results)")
    if len(path.parts) <= 2 and not _within(path, _system_roots()):
        reasons.append("it is a top-level folder")
    if reasons:
        raise InputError(f"the folder {path} cannot be mounted into the sandbox as a program's installation: "
                         f"{'; '.join(reasons)} — install the program in its own folder (a virtualenv, a system "
                         "prefix or evoci's tools folder) and name that folder")


def _system_roots() -> tuple[Path, ...]:
    return tuple(Path("/") / name for name in _SYSTEM)


def _within(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or path.is_relative_to(root) for root in roots)


def venv_base(venv: Path) -> list[Path]:
    """The installation a virtualenv's interpreter lives in (its ``pyvenv.cfg`` ``home``'s parent)."""
    try:
        lines = (venv / "pyvenv.cfg").read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = Path(value.strip())
            return [home.parent, Path(os.path.realpath(home)).parent]
    return []


@contextmanager
def pids_cgroup(limit: int) -> Iterator[list[str]]:
    """A fresh pids cgroup capped at ``limit``; yields the argv prefix that moves a command into it.

    Yields an empty prefix where no writable pids controller exists (then only RLIMIT_NPROC
    applies, which a user that is root on the host is exempt from).
    """
    group = _make_group(limit)
    if group is None:
        yield []
        return
    try:
        yield ["/bin/sh", "-c", f'echo $$ > {shlex.quote(str(group / "cgroup.procs"))} && exec "$@"', "evoci-pids"]
    finally:
        try:
            group.rmdir()
        except OSError:  # a process is still being reaped; the empty group is harmless
            pass


def _make_group(limit: int) -> Path | None:
    for base in _PIDS_ROOTS:
        if not (base / "cgroup.procs").exists() or not os.access(base, os.W_OK):
            continue
        if base == Path("/sys/fs/cgroup") and "pids" not in _read(base / "cgroup.subtree_control"):
            continue
        group = base / "evoci" / uuid.uuid4().hex[:12]
        try:
            group.mkdir(parents=True)
            (group / "pids.max").write_text(str(limit))
            return group
        except OSError:
            continue
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _system_binds() -> list[str]:
    binds: list[str] = []
    for name in _SYSTEM:
        path = Path("/") / name
        if path.is_symlink():
            binds += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            binds += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        path = Path("/etc") / name
        if path.exists():
            binds += ["--ro-bind", str(path), str(path)]
    return binds


def _unique_existing(paths: list[Path]) -> list[Path]:
    seen: list[Path] = []
    for path in paths:
        path = Path(path)
        if path.exists() and path not in seen and not any(path.is_relative_to(p) for p in seen):
            seen = [p for p in seen if not p.is_relative_to(path)] + [path]
    return seen
