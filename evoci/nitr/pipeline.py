"""A NITR evaluator's ``pipeline.json``: the ordered modules that judge one probe.

The public layout (``evaluator/<case>/pipeline.json``) lists modules by ``module_name``:

    build              a command; failing it makes the probe a build error (category E)
    unit_test          a command running the hidden functional tests        → role functional
    required_paths     these paths exist                                    → role structural
    baseline_diff      these files differ from the pristine starter only as allowed → structural
    frozen_paths       these files are unchanged from the starter           → role structural
    source_analysis    declarative rules over the sources (``evoci.nitr.rules``) → structural
    customized_check   the probe's own structural check program              → role structural

The schema is the public evaluator's (``MODULE_KEYS`` lists each module's keys): a command
is a list or a string (split like a shell would), with ``cwd`` and ``env``; pipeline
``variables`` fill placeholders and decide ``enabled_if`` (a module whose flag is off is
not part of the pipeline); a top-level ``env`` applies to every command; a top-level
``build_dir`` makes a ``build`` module configure the CMake project first when nothing did
(with its ``configure_args``). Placeholders ``{case_root}``, ``{baseline_case_root}``,
``{evaluator_root}``, ``{build_dir}``, ``{repo_root}`` (and evoci's ``{data_dir}``) expand to
paths relative to the grading tree's root, the working folder of every command, so the same
pipeline runs in any sandbox (``PLACEHOLDERS``; a checkout built as one CMake project places
the case and its evaluator as the checkout does, see ``loader.NitrProbe.places``). The
top-level ``case_root``/``baseline_case_root``/``evaluator_root`` point at the public
runner's staging folders: evoci builds its own tree and ignores them. Anything else, or a
value evoci cannot evaluate, is an InputError naming the module and the key.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evoci.errors import InputError
from evoci.nitr import rules

COMMAND_MODULES = ("build", "unit_test", "customized_check")
FILE_MODULES = ("required_paths", "baseline_diff", "frozen_paths", "source_analysis")
MODULES = COMMAND_MODULES + FILE_MODULES
Places = dict[str, str]

# Paths the placeholders expand to, relative to the grading tree's root (see grading_tree).
PLACEHOLDERS: Places = {
    "case_root": "case",
    "baseline_case_root": "baseline",
    "evaluator_root": "evaluator",
    "data_dir": "evaluator/data",
    "build_dir": "build",
    "repo_root": ".",
}
ROOTS = ("repo_root", "case_root", "baseline_case_root", "evaluator_root", "build_dir")
_COMMON = {"module_name", "name", "enabled_if"}
_COMMAND = {"command", "cwd", "env", "timeout_s"}
_DIFF_LISTS = ("allow_created", "allow_deleted", "allow_modified", "allow_missing_in_root",
               "allow_missing_in_baseline", "allowed_created_top_levels", "include_globs", "exclude_globs", "paths")
MODULE_KEYS = {
    "build": _COMMAND | {"configure_args"},
    "unit_test": _COMMAND | {"min_expected_tests"},
    "customized_check": _COMMAND,
    "required_paths": {"root", "paths"},
    "frozen_paths": {"paths"},
    "baseline_diff": set(_DIFF_LISTS),
    "source_analysis": {"root", "scan_roots", "suffixes", "exclude_files", "exclude_globs", "normalize",
                        "stop_on_first_match", "rules", "global_rules"},
}
TOP_KEYS = {"modules", "variables", "env", "case_root", "baseline_case_root", "evaluator_root", "build_dir"}
NORMALIZE = (None, "", "none", "strip_comments", "strip_comments_and_strings")

# Per-module timeouts (seconds) when the module does not set ``timeout_s``.
DEFAULT_TIMEOUTS = {"build": 900.0, "unit_test": 600.0, "customized_check": 300.0}


class Module(BaseModel):
    """One pipeline module; fields beyond the common ones stay in ``settings``."""

    model_config = ConfigDict(frozen=True)

    module_name: str
    name: str
    command: tuple[str, ...] = ()
    shell_words: bool = Field(False, description="The command was one string: split it after expanding it.")
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = None
    variables: dict[str, str] = Field(default_factory=dict, description="Pipeline variables, as placeholders.")
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

    def expand(self, text: str, places: Places = PLACEHOLDERS) -> str:
        return text.format_map({**places, **self.variables})  # variables win, as in the public evaluator

    def argv(self, places: Places = PLACEHOLDERS) -> list[str]:
        if self.shell_words:
            return shlex.split(self.expand(self.command[0], places))
        return [self.expand(part, places) for part in self.command]

    def cwd(self, places: Places = PLACEHOLDERS) -> str:
        return self.expand(str(self.settings.get("cwd") or "."), places)

    def configure_args(self, places: Places = PLACEHOLDERS) -> list[str]:
        return [self.expand(str(a), places) for a in self.settings.get("configure_args", ["-DNITR_BUILD_EVALUATOR=ON"])]

    def timeout(self, ceiling: float) -> float:
        return min(self.timeout_s or DEFAULT_TIMEOUTS.get(self.module_name, 300.0), ceiling)


class Pipeline(BaseModel):
    """The evaluator's enabled modules, in order."""

    model_config = ConfigDict(frozen=True)

    modules: tuple[Module, ...]
    env: dict[str, str] = Field(default_factory=dict, description="Top-level env: every command's.")
    configures_build: bool = Field(False, description="A top-level build_dir: a build module configures CMake first.")

    def targets(self) -> dict[str, str]:
        """Target test id → role, for every module that decides one."""
        return {m.target_id: m.role for m in self.modules if m.role}

    def evaluator_files(self, places: Places = PLACEHOLDERS) -> list[str]:
        """Evaluator files the commands name ({evaluator_root}/…): they must exist, or the install is broken."""
        prefix = places["evaluator_root"] + "/"
        return sorted({p for m in self.modules for p in m.argv(places) if p.startswith(prefix)})


def enabled(flag: Any, variables: dict[str, Any]) -> bool:
    """``enabled_if`` as the public evaluator reads it: a bool, a variable's name, or any value's truth."""
    if flag is None:
        return True
    if isinstance(flag, str):
        flag = variables.get(flag)
    if isinstance(flag, str):
        return flag.strip().lower() not in {"", "0", "false", "off", "no"}
    return bool(flag)


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_settings(kind: str, raw: dict[str, Any]) -> None:
    """ValueError naming the first key of a module that evoci cannot evaluate as written."""
    unknown = sorted(set(raw) - _COMMON - MODULE_KEYS[kind])
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} — a {kind} module may use: "
                         f"{', '.join(sorted(_COMMON | MODULE_KEYS[kind]))}")
    if kind in COMMAND_MODULES and not (raw.get("command") and (isinstance(raw["command"], str) or _strings(raw["command"]))):
        raise ValueError("`command` must be a non-empty list of strings or a string")
    if kind in ("required_paths", "frozen_paths") and not (raw.get("paths") and _strings(raw["paths"])):
        raise ValueError("`paths` must be a non-empty list of strings")
    if raw.get("root", "case_root") not in ROOTS:
        raise ValueError(f"`root` is {raw['root']!r} — use one of: {', '.join(ROOTS)}")
    for key in (*_DIFF_LISTS, "scan_roots", "suffixes", "exclude_files", "configure_args"):
        if key in raw and not _strings(raw[key]):
            raise ValueError(f"`{key}` must be a list of strings")
    for key in ("include_globs", "exclude_globs"):
        if any(not g or g.startswith("/") for g in raw.get(key, [])):
            raise ValueError(f"`{key}` holds an empty or absolute glob — globs are relative to the case")
    if kind == "source_analysis":
        if raw.get("normalize") not in NORMALIZE:
            raise ValueError(f"`normalize` is {raw['normalize']!r} — use one of: strip_comments, "
                             "strip_comments_and_strings, none")
        if not raw.get("rules") and not raw.get("global_rules"):
            raise ValueError("a source_analysis module needs `rules` or `global_rules`")
        for key, fields in (("rules", rules.FILE_FIELDS), ("global_rules", rules.GLOBAL_FIELDS)):
            if not isinstance(raw.get(key, []), list):
                raise ValueError(f"`{key}` must be a list of rules")
            for i, rule in enumerate(raw.get(key, [])):
                rules.check_rule(rule, f"{key}[{i}]", fields)
    if "min_expected_tests" in raw and not isinstance(raw["min_expected_tests"], int):
        raise ValueError("`min_expected_tests` must be an integer")


def _module(raw: dict[str, Any], index: int, variables: dict[str, str]) -> Module:
    kind = raw["module_name"]
    command = raw.get("command") or ()
    settings = {k: v for k, v in raw.items() if k not in {"module_name", "name", "command", "env", "timeout_s"}}
    module = Module(module_name=kind, name=str(raw.get("name") or f"{kind}_{index}"),
                    command=(command,) if isinstance(command, str) else tuple(command),
                    shell_words=isinstance(command, str), variables=variables,
                    env={str(k): str(v) for k, v in (raw.get("env") or {}).items()},
                    timeout_s=raw.get("timeout_s"), settings=settings)
    module.argv(), module.cwd(), module.configure_args()  # every placeholder must be known
    for key in ("scan_roots",):
        for value in raw.get(key, []):
            module.expand(value)
    for value in module.env.values():
        module.expand(value)
    return module


def parse_pipeline(data: Any, where: str) -> Pipeline:
    """A Pipeline from pipeline.json's content; InputError naming the bad module and key otherwise."""
    if not isinstance(data, dict) or not isinstance(data.get("modules"), list) or not data["modules"]:
        raise InputError(f"{where}: expected an object with a non-empty `modules` list")
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise InputError(f"{where}: unknown top-level key {unknown[0]!r} — a pipeline may use: {', '.join(sorted(TOP_KEYS))}")
    if not isinstance(data.get("variables", {}), dict) or not isinstance(data.get("env", {}), dict):
        raise InputError(f"{where}: `variables` and `env` must be objects")
    variables = data.get("variables", {})
    tokens = {str(k): str(v) for k, v in variables.items()}
    modules, names = [], set()
    for index, raw in enumerate(data["modules"]):
        if not isinstance(raw, dict):
            raise InputError(f"{where}: module {index} is not an object")
        kind = raw.get("module_name")
        if kind not in MODULES:
            raise InputError(f"{where}: module {index} has module_name {kind!r} — choose one of: {', '.join(MODULES)}")
        name = str(raw.get("name") or f"{kind}_{index}")
        if not enabled(raw.get("enabled_if"), variables):
            continue
        if name in names:
            raise InputError(f"{where}: two modules are named {name!r} — module names must be unique")
        names.add(name)
        try:
            _check_settings(kind, raw)
            modules.append(_module(raw, index, tokens))
        except (KeyError, IndexError) as exc:
            raise InputError(f"{where}: module {name!r} uses an unknown placeholder {exc} — use one of: "
                             f"{', '.join('{' + p + '}' for p in [*PLACEHOLDERS, *tokens])}") from exc
        except ValueError as exc:
            raise InputError(f"{where}: module {name!r} ({kind}): {exc}") from exc
    if not any(m.role == "functional" for m in modules) or not any(m.role == "structural" for m in modules):
        raise InputError(f"{where}: a NITR evaluator needs at least one enabled unit_test module and one "
                         "structural module")
    return Pipeline(modules=tuple(modules), env={str(k): str(v) for k, v in data.get("env", {}).items()},
                    configures_build="build_dir" in data)


def load_pipeline(path: Path) -> Pipeline:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(f"{path}: missing — every evaluator folder needs a pipeline.json") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from exc
    return parse_pipeline(data, str(path))
