"""Agent CLIs installed by evoci: one folder per CLI and version in evoci's tools folder.

The papers ran published CLIs (npm or PyPI packages). evoci installs each one with the
package manager it ships for, at a pinned version, into ``<tools>/<name>-<version>/``; the
sandbox mounts exactly that folder (plus the system), so what the agent runs is what
``evoci agents list`` shows, and the version is part of the run's identity.

    npm:  <tools>/<name>-<version>/node_modules/.bin/<program>   (npm install --prefix)
    pip:  <tools>/<name>-<version>/bin/<program>                 (a virtualenv of its own)

The tools folder is ``$EVOCI_TOOLS`` if set, else ``<evoci home>/tools``: several homes (and
the test suite) can share one installation.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from evoci.errors import InputError
from evoci.settings import Paths

MARKER = "evoci-install.json"  # written last: a folder without it is a broken install, redone


@dataclass(frozen=True)
class Package:
    """Where a CLI comes from and which of its programs evoci starts."""

    manager: str  # "npm" or "pip"
    package: str
    version: str  # the pinned default
    program: str
    probe: tuple[str, ...] = ("--version",)  # arguments that show the program starts (exit 0)
    native: str | None = None  # a glob under the installation for the platform's own binary, run instead
    # of the package's Node launcher: the CLI then needs no Node (a task image has none)


PACKAGES: dict[str, Package] = {
    "claude-code": Package("npm", "@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": Package("npm", "@openai/codex", "0.169.0", "codex",
                     native="node_modules/@openai/codex-linux-*/vendor/*/bin/codex"),
    "opencode": Package("npm", "opencode-ai", "1.18.33", "opencode"),
    "mini-swe-agent": Package("pip", "mini-swe-agent", "2.4.6", "mini", ("--help",)),  # it has no --version
    "aider": Package("pip", "aider-chat", "0.86.2", "aider"),
}


@dataclass(frozen=True)
class Installed:
    name: str
    version: str
    root: Path  # the installation: the one folder the sandbox mounts
    program: Path

    def as_dict(self) -> dict[str, str]:
        return {"name": self.name, "version": self.version, "root": str(self.root), "program": str(self.program)}


def tools_dir(home: str | Path | None = None) -> Path:
    """``$EVOCI_TOOLS``, else ``<home>/tools``."""
    env = os.environ.get("EVOCI_TOOLS")
    return Path(env).absolute() if env else Paths.of(home).home / "tools"


def parse_spec(spec: str) -> tuple[str, str]:
    """``NAME[@VERSION]`` → (name, version), the pinned version when none is given."""
    name, _, version = spec.partition("@")
    package = package_of(name)
    return name, version or package.version


def package_of(name: str) -> Package:
    try:
        return PACKAGES[name]
    except KeyError:
        raise InputError(f"unknown agent CLI {name!r} — evoci installs: {', '.join(PACKAGES)}") from None


def install_command(name: str, version: str | None = None) -> str:
    """What a user types to install the CLI (quoted in error messages)."""
    pinned = package_of(name).version
    return f"evoci agents install {name}" + (f"@{version}" if version and version != pinned else "")


def _root(tools: Path, name: str, version: str) -> Path:
    return tools / f"{name}-{version}"


def _program(root: Path, package: Package) -> Path:
    native = sorted(root.glob(package.native)) if package.native else []
    return native[0] if native else root / ("node_modules/.bin" if package.manager == "npm" else "bin") / package.program


def find(name: str, version: str | None = None, *, home: str | Path | None = None) -> Installed | None:
    """The installation of ``name`` (at ``version``, default the pinned one), or None."""
    package = package_of(name)
    root = _root(tools_dir(home), name, version or package.version)
    try:
        record = json.loads((root / MARKER).read_text())
    except (OSError, ValueError):
        return None
    program = _program(root, package)
    return Installed(name, record["version"], root, program) if program.exists() else None


def installed(home: str | Path | None = None) -> list[Installed]:
    """Every complete installation in the tools folder, by name then version."""
    tools, found = tools_dir(home), []
    for marker in sorted(tools.glob(f"*/{MARKER}")) if tools.is_dir() else []:
        try:
            record = json.loads(marker.read_text())
            hit = find(record["name"], record["version"], home=home)
        except (OSError, ValueError, KeyError, InputError):
            continue
        if hit:
            found.append(hit)
    return found


def install(spec: str, *, home: str | Path | None = None, log=print) -> Installed:
    """Install ``NAME[@VERSION]`` unless that exact installation is already complete."""
    name, version = parse_spec(spec)
    done = find(name, version, home=home)
    if done:
        return done
    package = package_of(name)
    root = _root(tools_dir(home), name, version)
    shutil.rmtree(root, ignore_errors=True)  # a half-finished earlier attempt
    root.mkdir(parents=True)
    if package.manager == "npm":
        if shutil.which("npm") is None:
            raise InputError(f"installing {name} needs npm (Debian: apt-get install npm)")
        steps = [["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", "--loglevel=error",
                  f"{package.package}@{version}"]]
    else:
        steps = [[sys.executable, "-m", "venv", str(root)],
                 [str(root / "bin/python"), "-m", "pip", "install", "--quiet", f"{package.package}=={version}"]]
    for step in steps:
        log(f"evoci: {' '.join(step)}")
        done_step = subprocess.run(step, capture_output=True, text=True)
        if done_step.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise InputError(f"could not install {package.package} {version}: {done_step.stderr.strip()[-800:]}")
    (root / MARKER).write_text(json.dumps({"name": name, "version": version, "package": package.package}))
    hit = find(name, version, home=home)
    if hit is None:
        raise InputError(f"{package.package} {version} installed but has no program {package.program!r}")
    return hit


__all__ = ["PACKAGES", "Installed", "Package", "find", "install", "install_command", "installed", "parse_spec",
           "tools_dir"]
