"""A run's configuration checked before anything is recorded or run.

An unknown agent kind, an option no agent reads or a sandbox option the sandbox does not
know would otherwise surface only when the first agent node starts: after the run id was
claimed and the oracle and iteration 0 ran, leaving a task ``running`` forever; a typo in an
option would silently make a new run id. ``check_run_config`` refuses them at once, with the
nearest valid name, for every protocol and every agent (the baselines too).
"""

from __future__ import annotations

import difflib
from typing import Any

from evoci.domain import AgentConfig, RunConfig, SandboxConfig
from evoci.errors import InputError

# The agents each protocol runs (`replay` is every protocol's embedded default).
KINDS: dict[str, tuple[str, ...]] = {
    "swe-ci": ("replay", "llm", "command"),
    "swe-evo": ("gold", "empty", "replay", "llm", "command", "predictions"),
    "nitr": ("replay", "reference", "command", "llm", "api"),
    "swe-bench-cl": ("gold", "null", "scripted", "llm", "command"),
}
# Options of the agents whose options are not a pydantic model of their own. `model_block` and
# `block_settings` are what --architect/--programmer-block write; `sha256` is what evoci adds to
# a predictions file. NITR's replay is its reference solution (`solution`).
PLAIN_OPTIONS: dict[str, tuple[str, ...]] = {
    "replay": ("solution",), "reference": ("solution",), "gold": (), "empty": (), "null": (),
    "scripted": ("resolve",), "predictions": ("path", "sha256"),
}
BLOCK_OPTIONS = ("model_block", "block_settings")


def nearest(word: str, choices: list[str] | tuple[str, ...]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_keys(given: dict[str, Any] | list[str], valid: list[str] | tuple[str, ...], what: str) -> str | None:
    """A message naming each key of ``given`` not in ``valid`` with its nearest valid key, or None."""
    unknown = sorted(k for k in given if k not in valid)
    if not unknown:
        return None
    named = ", ".join(f"{k!r}{nearest(k, valid)}" for k in unknown)
    return f"unknown {what} {named} — choose from: {', '.join(sorted(valid)) or '(none)'}"


def check_agent(config: AgentConfig, protocol: str, role: str = "agent") -> None:
    """``config`` names an agent ``protocol`` runs, with options that agent reads; else InputError."""
    kinds = KINDS[protocol]
    if config.kind not in kinds:
        raise InputError(f"unknown {protocol} {role} {config.kind!r}{nearest(config.kind, kinds)} "
                         f"— choose one of: {', '.join(kinds)}")
    if config.kind in ("llm", "api"):
        if config.options.get("model_block"):
            problem = unknown_keys(config.options, BLOCK_OPTIONS, f"option of a kind={config.kind!r} agent")
            if problem:
                raise InputError(problem)
            return
        from evoci.agents.llm.config import ModelConfig

        ModelConfig.from_agent_config(config.model_copy(update={"kind": "llm"}))  # InputError naming the option
        return
    if config.kind == "command":
        from evoci.agents.command import CommandConfig
        from evoci.agents.llm.config import parse_options

        parse_options(CommandConfig, dict(config.options), "command")
        return
    replay_elsewhere = config.kind == "replay" and protocol != "nitr"  # the real history takes no option
    valid = () if replay_elsewhere else PLAIN_OPTIONS[config.kind]
    problem = unknown_keys(config.options, valid, f"option of the {config.kind} agent")
    if problem:
        raise InputError(problem)


def check_sandbox(config: SandboxConfig) -> None:
    """The sandbox's options are ones its kind reads (values checked too); else InputError."""
    from pydantic import ValidationError

    options = {k: v for k, v in config.options.items() if k != "unisolated_because"}
    if config.kind == "docker":
        from evoci.sandbox.docker.options import DockerOptions

        DockerOptions.parse(options)  # InvalidDockerOptions (an InputError) names the valid keys
        return
    if config.kind == "host":
        problem = unknown_keys(options, (), "option of the host sandbox")
        if problem:
            raise InputError(problem)
        return
    from evoci.sandbox.bwrap import BwrapOptions

    problem = unknown_keys(options, tuple(BwrapOptions.model_fields), "option of the local sandbox")
    if problem:
        raise InputError(problem)
    try:
        BwrapOptions(**options)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InputError(f"bad local sandbox option {'.'.join(map(str, error['loc']))}: {error['msg']}") from None


def check_run_config(config: RunConfig) -> RunConfig:
    """``config`` itself when every agent and the sandbox are usable for its protocol; else InputError."""
    check_agent(config.programmer, config.protocol, "agent")
    if config.protocol == "swe-ci":  # the only protocol with an architect
        check_agent(config.architect, config.protocol, "architect")
    check_sandbox(config.sandbox)
    return config
