"""A NITR evaluator's ``pipeline.json``: the ordered modules that judge one probe.

The public layout (``evaluator/<case>/pipeline.json``) lists modules by ``module_name``:

    build              a command; failing it makes the probe a build error (category E)
    unit_test          a command running the hidden functional tests        → role functional
    required_paths     these files exist in the agent's code                → role structural
    baseline_diff      these files differ from the pristine starter only as allowed → structural
    frozen_paths       these files are byte-identical to the starter         → role structural
    source_analysis    declarative regex / substring rules over the sources  → role structural
    customized_check   the probe's own structural check program              → role structural

Commands may use the placeholders ``{case_root}``, ``{baseline_case_root}``,
``{evaluator_root}``, ``{data_dir}``, ``{build_dir}`` and ``{repo_root}``. evoci expands them
to paths relative to the grading tree's root, the working folder of every command, so the
same pipeline runs in any sandbox (``PLACEHOLDERS``; a checkout built as one CMake project
places the case and its evaluator as the checkout does, see ``loader.NitrProbe.places``). Keys evoci does not use (``case_root`` at the top level,
which points at the official runner's staging folder) are ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evoci.errors import InputError

COMMAND_MODULES = ("build", "unit_test", "customized_check")
FILE_MODULES = ("required_paths", "baseline_diff", "frozen_paths", "source_analysis")
MODULES = COMMAND_MODULES + FILE_MODULES

# Paths the placeholders expand to, relative to the grading tree's root (see grading_tree).
PLACEHOLDERS = {
    "case_root": "case",
    "baseline_case_root": "baseline",
    "evaluator_root": "evaluator",
    "data_dir": "evaluator/data",
    "build_dir": "build",
    "repo_root": ".",
}

# Per-module timeouts (seconds) when the module does not set ``timeout_s``.
DEFAULT_TIMEOUTS = {"build": 900.0, "unit_test": 600.0, "customized_check": 300.0}


class Module(BaseModel):
    """One pipeline module; fields beyond the common ones stay in ``settings``."""

    model_config = ConfigDict(frozen=True)

    module_name: str
    name: str
    command: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = None
    settings: dict[str, Any] = Field(default_factory=dict, description="The module's other keys, as written.")

    @property
    def role(self) -> str | None:
        """The target role this module decides: None for build (it decides E, not a target)."""
        if self.module_name == "build":
            return None
        return "functional" if self.module_name == "unit_test" else "structural"

    @property
    def target_id(self) -> str:
        return f"{self.module_name}:{self.name}"

    def expand(self, text: str, places: dict[str, str] = PLACEHOLDERS) -> str:
        return text.format(**places)

    def argv(self, places: dict[str, str] = PLACEHOLDERS) -> list[str]:
        return [self.expand(part, places) for part in self.command]

    def timeout(self, ceiling: float) -> float:
        return min(self.timeout_s or DEFAULT_TIMEOUTS.get(self.module_name, 300.0), ceiling)


class Pipeline(BaseModel):
    """The evaluator's modules, in order."""

    model_config = ConfigDict(frozen=True)

    modules: tuple[Module, ...]

    def targets(self) -> dict[str, str]:
        """Target test id → role, for every module that decides one."""
        return {m.target_id: m.role for m in self.modules if m.role}

    def evaluator_files(self, places: dict[str, str] = PLACEHOLDERS) -> list[str]:
        """Evaluator files the commands name ({evaluator_root}/…): they must exist, or the install is broken."""
        prefix = places["evaluator_root"] + "/"
        return sorted({p for m in self.modules for p in m.argv(places) if p.startswith(prefix)})


def parse_pipeline(data: Any, where: str) -> Pipeline:
    """A Pipeline from pipeline.json's content; InputError naming the bad module otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("modules"), list) or not data["modules"]:
        raise InputError(f"{where}: expected an object with a non-empty `modules` list")
    modules, names = [], set()
    for index, raw in enumerate(data["modules"]):
        if not isinstance(raw, dict):
            raise InputError(f"{where}: module {index} is not an object")
        kind = raw.get("module_name")
        if kind not in MODULES:
            raise InputError(f"{where}: module {index} has module_name {kind!r} — choose one of: {', '.join(MODULES)}")
        name = str(raw.get("name") or f"{kind}_{index}")
        if name in names:
            raise InputError(f"{where}: two modules are named {name!r} — module names must be unique")
        names.add(name)
        if kind in COMMAND_MODULES and not raw.get("command"):
            raise InputError(f"{where}: module {name!r} ({kind}) needs a `command` list")
        common = {"module_name", "name", "command", "env", "timeout_s"}
        try:
            modules.append(Module(
                module_name=kind, name=name, command=tuple(str(p) for p in raw.get("command") or ()),
                env={str(k): str(v) for k, v in (raw.get("env") or {}).items()}, timeout_s=raw.get("timeout_s"),
                settings={k: v for k, v in raw.items() if k not in common},
            ))
        except (ValidationError, KeyError, IndexError, ValueError) as exc:
            raise InputError(f"{where}: module {name!r} is malformed ({exc})") from exc
        try:
            modules[-1].argv()
        except (KeyError, IndexError, ValueError) as exc:
            raise InputError(f"{where}: module {name!r} uses an unknown placeholder {exc} — "
                             f"use one of: {', '.join('{' + p + '}' for p in PLACEHOLDERS)}") from exc
    if not any(m.role == "functional" for m in modules) or not any(m.role == "structural" for m in modules):
        raise InputError(f"{where}: a NITR evaluator needs at least one unit_test module and one structural module")
    return Pipeline(modules=tuple(modules))


def load_pipeline(path: Path) -> Pipeline:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: missing — every evaluator folder needs a pipeline.json") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
    return parse_pipeline(data, str(path))
