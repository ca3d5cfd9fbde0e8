"""A preset (``--agent claude-code`` …) resolved into a ``command`` agent, and what it adds to a call.

``resolve(config, protocol)`` turns ``AgentConfig(kind="claude-code", model=…, options={base_url,
version, …})`` into the ``command`` AgentConfig that runs it: the installed version, the command
line, environment and HOME files of the protocol's mode, and the gateway's upstream — all in
the options, so they are the run's identity (an upgraded CLI or a changed flag is a new run;
the key never is: only the name of its variable). It also checks, before anything runs, that the
CLI is installed and starts, naming the install command when it does not.

``CommandAgent`` then runs it like any command, with what ``PresetCall`` adds: the CLI's program
from evoci's tools folder, a fresh HOME seeded with the preset's files for every call, and
after the call the CLI's own usage and transcript (kept in the trajectory) and, in read-only
mode, its final answer.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evoci import treefs
from evoci.agents import install
from evoci.agents.presets import HOME_DIR, PRESETS, Preset
from evoci.domain import AgentConfig
from evoci.errors import InputError
from evoci.gateway import CliUsage, placeholders, sandbox_env

SEED_DIR = ".evoci/agent-seed"  # the HOME files, copied into a fresh HOME by the command itself
KEPT_BYTES = 2_000_000  # how much of the CLI's own session files the trajectory keeps
# The CLI builds its HOME inside the sandbox, so nothing the agent left at that path is followed.
PRELUDE = 'rm -rf "$HOME" && mkdir -p "$HOME" "$0" && cp -R "$0"/. "$HOME"/ && exec "$@"'
# Protocols whose agent may not run commands (NITR's agent mode): the preset's read-only mode.
READ_ONLY_PROTOCOLS = frozenset({"nitr"})
# What a preset may be given with --agent-option; anything else is refused by name.
USER_OPTIONS = ("base_url", "version", "provider", "api_key_env", "api_key_secret", "max_cost_usd", "max_calls",
                "timeout_s", "max_try", "price")


class PresetSpec(BaseModel):
    """The preset part of a resolved ``command`` agent's options (recorded with the run)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    name: str
    """The preset: claude-code, codex, opencode, mini-swe-agent or aider."""
    version: str
    """The CLI's version (its installation in evoci's tools folder)."""
    read_only: bool = False
    """NITR's agent mode: the CLI may read the repository, not write or run anything; its answer is
    a ``{"files": [...]}`` JSON that evoci writes."""
    home_files: dict[str, str] = Field(default_factory=dict)
    """Files seeded into the CLI's fresh HOME before each call (placeholders filled by name)."""


def is_preset(kind: str) -> bool:
    return kind in PRESETS


def resolve(config: AgentConfig, protocol: str = "swe-ci") -> AgentConfig:
    """The ``command`` AgentConfig a preset runs as; any other config unchanged."""
    if not is_preset(config.kind):
        return config
    preset = PRESETS[config.kind]
    options = dict(config.options)
    unknown = sorted(set(options) - set(USER_OPTIONS))
    if unknown:
        raise InputError(f"--agent {preset.name} takes no option {', '.join(unknown)} — its options are: "
                         f"{', '.join(USER_OPTIONS)}")
    if not config.model:
        raise InputError(f"--agent {preset.name} needs --model (the model name the upstream knows)")
    read_only = protocol in READ_ONLY_PROTOCOLS
    if read_only and not preset.read_only:
        raise InputError(f"{preset.name} acts only by running commands, and NITR's agent mode allows none — "
                         f"use claude-code, codex, opencode or aider for NITR")
    version = str(options.get("version") or install.package_of(preset.name).version)
    check_installed(preset.name, version)
    gateway: dict[str, Any] = {"provider": options.get("provider") or _provider(preset),
                               "base_url": options.get("base_url") or preset.public_base_url,
                               "api_key_env": options.get("api_key_env") or preset.key_env}  # fmt: skip
    for key in ("api_key_secret", "max_cost_usd", "max_calls", "price"):
        if options.get(key) is not None:
            gateway[key] = options[key]
    spec = PresetSpec(name=preset.name, version=version, read_only=read_only, home_files=preset.home_files(read_only))
    resolved: dict[str, Any] = {
        "command": preset.argv(read_only), "env": preset.env(read_only), "name": f"{preset.name}@{version}",
        "preset": spec.model_dump(), "gateway": gateway,
    }  # fmt: skip
    for key in ("timeout_s", "max_try"):
        if options.get(key) is not None:
            resolved[key] = options[key]
    return AgentConfig(kind="command", model=config.model, options=resolved)


def _provider(preset: Preset) -> str:
    return "anthropic" if preset.wire == "anthropic-messages" else "openai"


@functools.cache
def check_installed(name: str, version: str) -> install.Installed:
    """The installation, after checking its program starts; ``InputError`` naming the install command."""
    found = install.find(name, version)
    hint = install.install_command(name, version)
    if found is None:
        raise InputError(f"the {name} CLI {version} is not installed in {install.tools_dir()} — run `{hint}`")
    try:
        probe = install.package_of(name).probe
        done = subprocess.run([str(found.program), *probe], capture_output=True, text=True, timeout=120,
                              env={"PATH": os.environ.get("PATH", os.defpath), "HOME": str(found.root)})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"the {name} CLI at {found.program} does not start ({exc}) — reinstall it: `{hint}`") from None
    if done.returncode != 0:
        raise InputError(f"the {name} CLI at {found.program} does not start (`{' '.join(probe)}` exited {done.returncode}: "
                         f"{(done.stderr or done.stdout).strip()[-300:]}) — reinstall it: `{hint}`")
    return found


class PresetCall:
    """What a preset adds to one call of its CLI: the fields, the seeded HOME, what is read after."""

    def __init__(self, spec: PresetSpec, visible_root: str, *, user_namespaces: bool = True):
        self.spec = spec
        self.preset = PRESETS[spec.name]
        self.installed = check_installed(spec.name, spec.version)
        self.home = f"{visible_root}/{HOME_DIR}"
        self.user_namespaces = user_namespaces  # the sandbox lets commands create them (not Docker)

    def fields(self) -> dict[str, str]:
        return {**placeholders(), "program": str(self.installed.program), "home": self.home}

    def installs(self) -> tuple[str, ...]:
        """What the sandbox mounts for the CLI: exactly its installation."""
        return (str(self.installed.root),)

    def prepare(self, sandbox, fields: dict[str, Any]) -> None:
        """Write the HOME files (filled by name: their JSON braces stay) where the prelude copies them from."""
        for rel, text in self.spec.home_files.items():
            for key, value in fields.items():
                text = text.replace("{" + key + "}", str(value))
            sandbox.write_file(f"{SEED_DIR}/{rel}", text)

    def wrap(self, argv: list[str]) -> list[str]:
        """The filled command line, adapted to the sandbox, behind the prelude that builds HOME."""
        if not self.user_namespaces:
            argv = self.preset.without_userns(argv)
        return ["/bin/sh", "-c", PRELUDE, SEED_DIR, *argv]

    def env(self, env: dict[str, str], fields: dict[str, Any]) -> dict[str, str]:
        filled = {k: _fill(v, fields) for k, v in env.items()}
        return {**sandbox_env(), **filled, "HOME": self.home}

    def after(self, workspace: Path, stdout: str) -> tuple[CliUsage | None, dict[str, str], str]:
        """The CLI's own usage, its kept session files (HOME-relative path → text) and its final answer."""
        files = read_home(workspace, self.preset.kept)
        usage = _told(self.preset.usage, stdout, files, None)
        return (usage if _numbers(usage) else None), files, _told(self.preset.answer, stdout, files, "")


def _numbers(usage: CliUsage | None) -> bool:
    """Every count a CLI reported is a number (its JSON is the agent's to write: a string or a list
    there would raise where the gateway's account is compared with it)."""
    if usage is None:
        return False
    values = (usage.input_tokens, usage.output_tokens, usage.cached_tokens, usage.cost_usd, usage.calls)
    return all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values)


def _told(read: Callable[[str, dict[str, str]], Any], stdout: str, files: dict[str, str], nothing: Any) -> Any:
    """What ``read`` finds in the CLI's output and HOME files, or ``nothing``.

    Both are the agent's to write (HOME is in its workspace): whatever they hold — a list where an
    object was, JSON nested too deeply, a number that is not one — it is "the CLI said nothing",
    never an exception that would fail the node as the harness's fault and leave the task unscored.
    """
    try:
        return read(stdout, files)
    except Exception:  # noqa: BLE001 — any parser's failure on agent-written text
        return nothing


def _fill(text: str, fields: dict[str, Any]) -> str:
    for key, value in fields.items():
        text = text.replace("{" + key + "}", str(value))
    return text


def read_home(workspace: Path, kept: tuple[str, ...]) -> dict[str, str]:
    """Regular files under the CLI's HOME's ``kept`` paths, never following a link the agent could have made."""
    out: dict[str, str] = {}
    budget = KEPT_BYTES
    for rel in kept:
        start = workspace / HOME_DIR / rel
        paths = [start] if _real_dirs(workspace, start.parent) and _is_file(start) else sorted(_walk(workspace, start))
        for path in paths:
            name = path.relative_to(workspace / HOME_DIR).as_posix()
            size = path.lstat().st_size
            if size > budget:
                out[name] = f"(not kept: {size} bytes, over the trajectory's budget)"
                continue
            budget -= size
            data = path.read_bytes()
            out[name] = _sqlite_dump(path) if data.startswith(b"SQLite format 3") else (
                f"(binary, {size} bytes)" if b"\0" in data else data.decode("utf-8", errors="replace"))
    return out


def _sqlite_dump(path: Path) -> str:
    """A CLI's session database (OpenCode keeps its transcript and usage in one) as JSON lines per table."""
    import shutil
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:  # a copy: the WAL is folded in, the original never opened for writing
        for suffix in ("", "-wal", "-shm"):
            if _is_file(Path(f"{path}{suffix}")):
                shutil.copyfile(f"{path}{suffix}", f"{tmp}/db{suffix}")
        try:
            con = sqlite3.connect(f"{tmp}/db")
            lines = []
            for (table,) in con.execute("select name from sqlite_master where type = 'table'").fetchall():
                cursor = con.execute(f'select * from "{table}"')
                names = [d[0] for d in cursor.description]
                lines += [json.dumps({"table": table, **dict(zip(names, row))}, default=str) for row in cursor]
            con.close()
        except sqlite3.Error as exc:
            return f"(an SQLite file that could not be read: {exc})"
    return "\n".join(lines)


def _real_dirs(workspace: Path, path: Path) -> bool:
    """Every folder from ``workspace`` down to ``path`` is a real folder, not a link."""
    try:
        parts = path.relative_to(workspace).parts
    except ValueError:
        return False
    here = workspace
    for part in parts:
        here = here / part
        try:
            if not stat.S_ISDIR(here.lstat().st_mode):
                return False
        except OSError:
            return False
    return True


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _walk(workspace: Path, root: Path):
    if not _real_dirs(workspace, root):
        return
    for rel, kind in treefs.walk(root):  # any depth: os.walk of Python 3.11 recurses once per folder
        if kind == "file":
            yield root / rel


__all__ = ["PresetCall", "PresetSpec", "check_installed", "is_preset", "read_home", "resolve"]
