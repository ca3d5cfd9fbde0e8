"""``DockerSandbox``: each command runs in a fresh container over the bind-mounted workspace.

The workspace folder on the host is mounted at ``/workspace``; ``read_file`` and
``write_file`` work on the host folder directly. An **ephemeral** sandbox (the test node's
grading tree) mounts the folder read-only at ``/evoci-src`` and copies it into a size-capped
tmpfs at ``/workspace`` first: the code under test writes where it runs, and nothing it writes
reaches the host. Every ``exec`` creates a container from the
task image, with no network (``network_mode="none"``; an agent's model is served into it by the
gateway, see ``evoci.gateway``), CPU, memory (no swap)
and process-count limits, all capabilities dropped, as the caller's uid:gid (so files the
command writes stay the caller's; a ``Layout.as_root`` sandbox, SWE-bench grading, runs as
uid 0 with no capability, over an ephemeral copy), and an environment made of the caller's variables plus
the allow-listed, non-secret part of the harness's (locale, time zone) — never its API keys.
The container is removed in a ``finally``, whatever happened.

**Infrastructure or agent?** The rule decides between a Prefect retry and a score:

- *Infrastructure* (raised, ``SandboxError`` subclasses, retried): the engine is unreachable
  (``DockerUnavailable``); the image is missing (``ImageMissing``); the engine refuses to
  create, start or wait on the container (``ContainerError``, from an ``APIError``).
- *The command's own outcome* (returned as ``ExecResult``, scored): any exit code; the
  time limit (``timed_out=True``, ``exit_code=None``; the container is killed); the engine's
  OOM killer at the configured memory limit (exit 137 when it killed the command, and a note
  on stderr); fork bombs stopped by the pids limit; network calls refused; a program that
  does not exist (exit 127, as in a shell). The limits are part of the task's environment,
  so code that exceeds them failed on its own — a memory hog the agent wrote is the agent's.
  ``run_pytest`` classifies a test run (no report → canary → ``AGENT_ERROR``; a canary that
  fails too → ``SandboxError``).
"""

from __future__ import annotations

import logging
import os
import posixpath
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import docker
import docker.errors
import requests

from evoci.sandbox import silent
from evoci.sandbox.base import (DEFAULT_OUTPUT_LIMIT, REPORT_DIR, REPORT_DIR_BYTES, WORKSPACE, ExecResult, Layout, read_inside,
                                resolve_inside, write_inside)
from evoci.sandbox.budget import DiskWatch, ceiling_of, descendants
from evoci.sandbox.docker import cleanup
from evoci.sandbox.docker.concurrency import slot
from evoci.sandbox.docker.errors import START_HINT, ContainerError, DockerUnavailable, ImageMissing
from evoci.sandbox.docker.options import DockerOptions
from evoci.sandbox.process import BoundedCapture
from evoci.sandbox.scrub import scrubbed_env

if TYPE_CHECKING:
    from evoci.gateway.endpoint import GatewayEndpoint

log = logging.getLogger(__name__)

CONTAINER_WORKSPACE = "/workspace"
_SOURCE = "/evoci-src"
# Harness variables that describe the host, not the container: the image sets its own.
_HOST_ONLY = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TEMP", "TMP"})
_DRAIN_WAIT_S = 10.0
# Slack on top of the command's timeout before a silent `wait` is taken for a lost engine.
_WAIT_SLACK_S = 2.0


class DockerSandbox:
    """A workspace on the host plus a task image in which each command gets its own container."""

    # Commands cannot create user namespaces here: the engine's seccomp profile refuses them to a
    # container without CAP_SYS_ADMIN, and every capability is dropped. A CLI's own bubblewrap
    # sandbox cannot start inside; the container is the boundary (``PresetCall`` reads this).
    user_namespaces = False

    def __init__(
        self,
        client: docker.DockerClient,
        image: str,
        workspace: Path,
        options: DockerOptions,
        *,
        labels: Mapping[str, str] | None = None,
        user: str | None = None,
        base_env: Mapping[str, str] | None = None,
        ephemeral: bool = False,
        shared: Mapping[str, Path] | None = None,
        layout: Layout = WORKSPACE,
    ):
        self.client = client
        self.layout = layout
        self.ephemeral = ephemeral
        self._shared = dict(shared or {})  # place in the workspace -> host folder, mounted read-only
        self.image = image
        self.options = options
        self._workspace = Path(workspace).resolve()
        self._labels = {cleanup.LABEL: "1", **(labels or {})}
        # As root (``layout.as_root``): uid 0 of a container with every capability dropped.
        self._user = user or ("0:0" if layout.as_root else f"{os.getuid()}:{os.getgid()}")
        self._base_env = dict(base_env) if base_env is not None else None
        self._mine: set[str] = set()
        self.budget_overrun: int | None = None  # the growth a command went over (``evoci.sandbox.budget``)

    @property
    def workspace(self) -> Path:
        return self._workspace

    @property
    def report_dir(self) -> str:
        return REPORT_DIR if self.ephemeral else "/tmp"

    @property
    def visible_root(self) -> str:
        """Where commands see the workspace (``layout.root``, /workspace by default)."""
        return self.layout.root

    @property
    def tree_capacity(self) -> int | None:
        return ceiling_of(self.options.tree_bytes) if self.ephemeral else None

    @property
    def labels(self) -> dict[str, str]:
        """Labels every container of this sandbox carries (``evoci=1``, run and task ids when known)."""
        return dict(self._labels)

    def exec(
        self,
        cmd: list[str],
        *,
        cwd: str = ".",
        env: dict[str, str] | None = None,
        timeout: float,
        output_limit: int = DEFAULT_OUTPUT_LIMIT,
        gateway: GatewayEndpoint | None = None,
        installs: tuple[str, ...] = (),
    ) -> ExecResult:
        """Run ``cmd`` in a fresh container; remove it afterwards (see the module docstring for what raises).

        ``installs``: host installation folders (an agent CLI from evoci's tools folder, and a
        virtualenv's base interpreter) mounted read-only at their own paths for this command.

        ``gateway``: the model gateway's socket folder is mounted read-only and bridged to
        127.0.0.1 of the container's own (``none``) network before the command starts."""
        where = resolve_inside(self._workspace, cwd)
        if not where.is_dir() and not self.ephemeral:  # the engine would create it, owned by root, on the host
            raise ContainerError(f"working folder {cwd!r} does not exist in the workspace {self._workspace}")
        relative = where.relative_to(self._workspace).as_posix()
        workdir = posixpath.normpath(posixpath.join(self.layout.root, relative))
        with slot(self.options.concurrency_limit_name):
            return self._run(list(cmd), workdir, self._env(env), timeout, output_limit, gateway, installs)

    def read_file(self, path: str) -> bytes:
        return read_inside(self._workspace, path)

    def write_file(self, path: str, content: bytes | str) -> None:
        write_inside(self._workspace, path, content)

    def cleanup(self) -> None:
        """Remove any container of this sandbox that is still there (normally none). Idempotent."""
        for container_id in list(self._mine):
            self._remove(container_id)

    # -- one container ---------------------------------------------------------------------------

    def _run(self, cmd: list[str], workdir: str, env: dict[str, str], timeout: float, limit: int,
             gateway: GatewayEndpoint | None = None, installs: tuple[str, ...] = ()) -> ExecResult:
        started = time.monotonic()
        out, err = BoundedCapture(limit), BoundedCapture(limit)
        container_id = None
        # The workspace is a host folder unless ephemeral: its growth is watched while the container runs.
        watch = None if self.ephemeral else DiskWatch(self._workspace, self.options.workspace_growth_bytes,
                                                      ceiling_of(self.options.tree_bytes))
        over_budget = False
        try:
            container = self._create(cmd, workdir, env, gateway, installs)
            container_id = container.id
            reader = self._attach(container, out, err)
            self._engine("start the container", container.start)
            if watch is not None:
                watch.start(lambda: self._kill(container), self._processes(container))
            exit_code, timed_out = self._wait(container, timeout, started)
            over_budget = watch is not None and watch.stop()
            oom = False
            if not timed_out:
                self._engine("inspect the container", container.reload)
                oom = bool(container.attrs.get("State", {}).get("OOMKilled"))
            reader.join(_DRAIN_WAIT_S)
        finally:
            if watch is not None:
                watch.stop()
            if container_id is not None:
                self._remove(container_id)
        stderr = err.text()
        if over_budget:
            self.budget_overrun = watch.allowance  # type: ignore[union-attr]
            stderr += watch.note()  # type: ignore[union-attr]
        if oom:  # the exit code stays the command's own (137 when the OOM killer hit it, not a child)
            stderr += f"\n[evoci: the engine's OOM killer ran at the memory limit {self.options.memory}]\n"
        return ExecResult(
            exit_code=None if timed_out or over_budget else exit_code,
            stdout=out.text(),
            stderr=stderr,
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            truncated=bool(out.dropped or err.dropped),
            over_budget=over_budget,
        )

    def _processes(self, container) -> Callable[[], Iterable[int]]:
        """The container's processes as this machine's kernel numbers them (its first process and every
        process below it), for the disk watch; none when the engine runs on another machine."""
        self._engine("inspect the container", container.reload)
        pid = int(container.attrs.get("State", {}).get("Pid") or 0)
        try:
            ours = pid > 0 and container.id in Path(f"/proc/{pid}/cgroup").read_text()
        except OSError:  # not this kernel's process, or it ended already
            ours = False
        return (lambda: descendants(pid)) if ours else tuple

    @staticmethod
    def _kill(container) -> None:
        """Kill ``container`` from the disk watch's thread (it may have ended on its own just now)."""
        try:
            container.kill()
        except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
            log.debug("could not kill %s over its workspace budget: %s", container.short_id, exc)

    def _create(self, cmd: list[str], workdir: str, env: dict[str, str], gateway: GatewayEndpoint | None = None,
                installs: tuple[str, ...] = ()):
        tmp = {"/tmp": f"rw,exec,size={self.options.tmp_bytes}"}
        top = self.layout.root
        mounts: dict = {"volumes": {str(self._workspace): {"bind": top, "mode": "rw"}}, "tmpfs": tmp}
        for place, folder in self._shared.items():  # the engine mounts deeper targets after the workspace
            mounts["volumes"][str(folder)] = {"bind": f"{top}/{place}", "mode": "ro"}
        if self.ephemeral:
            mounts = {"volumes": {str(self._workspace): {"bind": _SOURCE, "mode": "ro"}},
                      "tmpfs": {**tmp, top: f"rw,exec,size={self.options.tree_bytes}",
                                REPORT_DIR: f"rw,size={REPORT_DIR_BYTES}"}}
            # Root without CAP_CHOWN cannot give the copy the host's owner: it owns its copy, as in the images.
            copy = "cp -a --no-preserve=ownership" if self.layout.as_root else "cp -a"
            cmd = ["/bin/sh", "-c", f'{copy} {_SOURCE}/. {top}/ && cd "$0" && exec "$@"', workdir, *cmd]
            workdir = "/"
        for install in installs:
            from evoci.sandbox.bwrap import refuse_install, venv_base

            refuse_install(Path(install), self._workspace)
            for path in (Path(install), *venv_base(Path(install))):
                mounts["volumes"].setdefault(str(path), {"bind": str(path), "mode": "ro"})
        if gateway is not None:
            from evoci.gateway.endpoint import SANDBOX_DIR, bridge_command  # evoci.gateway imports the agents

            mounts["volumes"][gateway.host_dir] = {"bind": SANDBOX_DIR, "mode": "ro"}
            cmd = ["/bin/sh", "-c", f'{bridge_command()} && cd "$0" && exec "$@"', workdir, *cmd]
            workdir = "/"
        caps: dict = {}
        if self.layout.silent_network:
            # The capability the route needs, and the one that lets the script drop every capability
            # from the bounding set (so a root command cannot regain them at exec), both gone before
            # anything else runs (evoci.sandbox.silent); the container's network stays "none".
            cmd, caps = silent.wrap("python3", cmd, drop_caps=True), {"cap_add": ["NET_ADMIN", "SETPCAP"]}
        try:
            container = self.client.containers.create(
                self.image,
                cmd,
                working_dir=workdir,
                environment=env,
                user=self._user,
                labels=self._labels,
                **mounts,
                network_mode=self.options.network,
                nano_cpus=self.options.nano_cpus,
                mem_limit=self.options.memory,
                memswap_limit=self.options.memory,  # equal to mem_limit: no swap
                pids_limit=self.options.pids_limit,
                cap_drop=["ALL"],
                **caps,
                security_opt=["no-new-privileges"],
                init=True,  # reaps orphans, so `exec` ends when the command does
                log_config={"type": "none"},  # output is read live through attach, never stored
                stdin_open=False,
                tty=False,
            )
        except docker.errors.ImageNotFound as exc:
            raise ImageMissing(f"image {self.image!r} is not in the Docker engine — run `evoci images bootstrap` or rebuild the task image") from exc
        except docker.errors.APIError as exc:
            raise ContainerError(f"the Docker engine could not create a container from {self.image}: {exc.explanation}") from exc
        except requests.exceptions.ConnectionError as exc:
            raise DockerUnavailable(f"lost the Docker engine: {exc}; {START_HINT}") from exc
        self._mine.add(container.id)
        cleanup.register(self.client, container.id)
        return container

    def _attach(self, container, out: BoundedCapture, err: BoundedCapture) -> threading.Thread:
        """Stream the container's output into ``out``/``err`` from a thread (attached before start: nothing is missed)."""
        stream = self._engine(
            "attach to the container",
            lambda: container.attach(stdout=True, stderr=True, stream=True, demux=True, logs=False),
        )

        def pump() -> None:
            try:
                for chunk_out, chunk_err in stream:
                    if chunk_out:
                        out.add(chunk_out)
                    if chunk_err:
                        err.add(chunk_err)
            except Exception as exc:  # the container was removed under us; its output ends here
                log.debug("output stream of %s ended: %s", container.short_id, exc)

        reader = threading.Thread(target=pump, name=f"evoci-docker-{container.short_id}", daemon=True)
        reader.start()
        return reader

    def _wait(self, container, timeout: float, started: float) -> tuple[int | None, bool]:
        """(exit code, timed out). Kills the container at ``timeout``."""
        remaining = max(timeout - (time.monotonic() - started), 0.001)
        try:
            status = container.wait(timeout=remaining)
        except requests.exceptions.RequestException as exc:  # the read timed out, or the engine went away
            if time.monotonic() - started < timeout - _WAIT_SLACK_S:
                raise DockerUnavailable(f"lost the Docker engine while a command ran: {exc}; {START_HINT}") from exc
            try:
                container.kill()
            except docker.errors.APIError:
                pass  # it ended on its own just now; the time limit was reached all the same
            except requests.exceptions.ConnectionError as kill_exc:
                raise DockerUnavailable(f"lost the Docker engine while killing a timed-out command: {kill_exc}") from kill_exc
            return None, True
        except docker.errors.APIError as exc:
            raise ContainerError(f"the Docker engine could not wait on the container: {exc.explanation}") from exc
        if status.get("Error"):
            raise ContainerError(f"the Docker engine reported an error waiting on the container: {status['Error']}")
        return int(status.get("StatusCode", -1)), False

    def _engine(self, what: str, call):
        try:
            return call()
        except docker.errors.APIError as exc:
            raise ContainerError(f"the Docker engine could not {what}: {exc.explanation}") from exc
        except requests.exceptions.ConnectionError as exc:
            raise DockerUnavailable(f"lost the Docker engine trying to {what}: {exc}; {START_HINT}") from exc

    def _remove(self, container_id: str) -> None:
        try:
            self.client.api.remove_container(container_id, force=True)
        except docker.errors.NotFound:
            pass
        except (docker.errors.APIError, requests.exceptions.RequestException) as exc:
            # Raising here would turn a finished command into a retry; the label lets prune find it.
            log.warning("could not remove container %s (run `evoci sandbox prune`): %s", container_id[:12], exc)
        self._mine.discard(container_id)
        cleanup.unregister(container_id)

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        inherited = {k: v for k, v in scrubbed_env(self._base_env).items() if k not in _HOST_ONLY}
        identity = {"HOME": "/root", "USER": "root", "LOGNAME": "root"} if self.layout.as_root else {}
        return {
            **inherited,
            "HOME": "/tmp",  # the caller's uid may have no home in the image
            **identity,
            # The workspace is a git work tree evoci commits: keep __pycache__ out of it.
            "PYTHONDONTWRITEBYTECODE": "1",
            **(extra or {}),
        }
