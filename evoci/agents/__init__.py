"""Agents: who plays the architect and the programmer.

``make_agent(role, config)`` builds one from an ``AgentConfig``. ``replay`` (the
human-replay baseline) ships here; ``llm``, ``command`` and the agent CLI presets
(``claude-code``, ``codex``, ``opencode``, ``mini-swe-agent``, ``aider``) are imported only when used.
"""

from __future__ import annotations

from collections.abc import Callable

from evoci.agents.install import PACKAGES
from evoci.agents.base import Agent, AgentContext, AgentOutcome, AgentStatus, ModelCall, Role
from evoci.domain import AgentConfig


def _replay(role: Role, config: AgentConfig) -> Agent:
    from evoci.agents.replay import ReplayArchitect, ReplayProgrammer

    return ReplayArchitect() if role is Role.ARCHITECT else ReplayProgrammer()


def _llm(role: Role, config: AgentConfig) -> Agent:
    from evoci.agents.llm.roles import make_llm_agent

    return make_llm_agent(role, config)


def _command(role: Role, config: AgentConfig) -> Agent:
    from evoci.agents.command import CommandAgent

    return CommandAgent.from_config(role, config)


def _preset(role: Role, config: AgentConfig) -> Agent:
    from evoci.agents.cli_agent import resolve
    from evoci.agents.command import CommandAgent

    return CommandAgent.from_config(role, resolve(config))


AGENTS: dict[str, Callable[[Role, AgentConfig], Agent]] = {"replay": _replay, "llm": _llm, "command": _command}
# The agent CLIs evoci installs and runs as presets (evoci.agents.presets); `evoci run` resolves them first.
AGENTS.update(dict.fromkeys(PACKAGES, _preset))


def make_agent(role: Role | str, config: AgentConfig) -> Agent:
    """The agent ``config.kind`` names, for ``role``; a clear error for an unknown kind."""
    try:
        factory = AGENTS[config.kind]
    except KeyError:
        raise ValueError(f"unknown agent {config.kind!r} — choose one of: {', '.join(sorted(AGENTS))}") from None
    return factory(Role(role), config)


__all__ = ["AGENTS", "Agent", "AgentContext", "AgentOutcome", "AgentStatus", "ModelCall", "Role", "make_agent"]
