"""``CommandAgent``: an external agent CLI (Claude Code, Codex CLI, aider, mini-swe-agent …)
plays a role, run inside the sandbox from a command template.

The role's SWE-CI prompt (plus, for the programmer, the requirement document) is written
to ``.evoci/prompt.md``; the template's placeholders are filled and the command runs in
the workspace root. What the command leaves in the workspace is the outcome (the harness
commits the diff). An architect's command must write ``.evoci/requirement.xml``; it is
validated like any architect's.

    AgentConfig(kind="command", model="sonnet", options={
        "command": ["claude", "-p", "--model", "{model}", "--allowedTools", "Edit,Read", "@{prompt_file}"],
        "pass_env": ["ANTHROPIC_API_KEY"], "timeout_s": 1800})

A CLI that needs its model gets the **model gateway** (the ``gateway`` option, a
``GatewayConfig``): the command runs in a sandbox without network whose one way out is the
gateway, holding a dummy key; every call it makes is accounted by the gateway, and an upstream
that rejects the key or stays down ends the attempt as bad input or infrastructure, whatever the
CLI's exit status (see ``evoci.gateway``). The sandbox hands commands no secrets; ``pass_env``
hands variables by name (never a key: the gateway keeps keys on the host).
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evoci.agents.base import HARNESS_DIR, REQUIREMENT_FILE, AgentContext, AgentOutcome, AgentStatus, ModelCall, Role
from evoci.agents.cli_agent import PresetCall, PresetSpec
from evoci.agents.llm import prompts
from evoci.agents.llm.config import parse_options
from evoci.agents.requirement import validate_requirement
from evoci.domain import AgentConfig
from evoci.errors import InputError
from evoci.gateway import CliUsage, GatewayConfig, open_gateway, placeholders, sandbox_env
from evoci.gateway.server import Gateway

PROMPT_FILE = f"{HARNESS_DIR}/prompt.md"
TAIL_CHARS = 4000  # how much of stdout and stderr the trajectory keeps


class CommandConfig(BaseModel):
    """How to run an external agent CLI."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    command: list[str] = Field(min_length=1)
    """The command template. Placeholders: {prompt} (the prompt's text), {prompt_file} (the same
    text in a file), {requirement_file}, {role}, {iteration}, {max_iterations}, {model}
    (AgentConfig.model, or '' when unset); an argument that is exactly {source_files} becomes one
    argument per source file of the workspace (tests and hidden files left out)."""
    timeout_s: float = Field(3600.0, gt=0)
    """Kill the command (and everything it started) after this many seconds → LIMIT."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for the command (recorded with the run: no secrets here)."""
    pass_env: list[str] = Field(default_factory=list)
    """Names of this process's environment variables handed to the command (API keys)."""
    name: str | None = None
    """The agent's name in results; default 'command:<program>'."""
    preset: PresetSpec | None = None
    """Set by ``--agent claude-code`` and the other presets (``evoci.agents.cli_agent``)."""
    max_try: int = Field(1, ge=1)
    """The official SWE-CI harness's retry rule: a run that fails (non-zero exit, no valid
    requirement.xml) is tried again from the same input commit, up to this many times."""
    gateway: GatewayConfig | None = None
    """The model upstream the command reaches through evoci's gateway; None = no model, no network.
    Adds {gateway_url}, {openai_base_url} and {dummy_key} to the placeholders."""


class CommandAgent:
    """Runs ``config.command`` in the sandbox for one role."""

    def __init__(self, role: Role, config: CommandConfig, *, model: str | None = None):
        self.role = role
        self.config = config
        self.model = model
        self.name = config.name or f"command:{os.path.basename(config.command[0])}"

    @classmethod
    def from_config(cls, role: Role | str, cfg: AgentConfig) -> "CommandAgent":
        """The agent for a ``command`` AgentConfig (``InputError`` on bad options)."""
        return cls(Role(role), parse_options(CommandConfig, dict(cfg.options), "command"), model=cfg.model)

    def run(self, ctx: AgentContext) -> AgentOutcome:
        if self.config.gateway is None:
            return self.attempt(ctx, None)
        transcript = getattr(ctx, "transcript", None)  # NITR's step context has none: kept in the trajectory
        with open_gateway(self.config.gateway, on_call=getattr(ctx, "on_call", None), transcript=transcript,
                          model=self.model) as gw:
            try:
                outcome = self.attempt(ctx, gw)
            except Exception as exc:
                if getattr(exc, "outcome", None) is None:
                    exc.outcome = AgentOutcome(calls=list(gw.calls))  # type: ignore[attr-defined]
                raise
        outcome.calls = list(gw.calls)
        outcome.trajectory.append({"role": "gateway", "totals": gw.totals(),
                                   "transcript": str(transcript) if transcript else gw.transcript,
                                   "calls": [c.__dict__ for c in gw.calls]})
        reported = next((step["cli_usage"] for step in outcome.trajectory if step.get("cli_usage")), None)
        if reported:  # the CLI's own account beside the gateway's: a difference is recorded, never used
            check = gw.cross_check(CliUsage(**reported))
            outcome.trajectory[-1]["usage_check"] = {**asdict(check), "agrees": check.agrees}
        if gw.failure is not None:
            gw.failure.outcome = outcome  # type: ignore[attr-defined] - the calls already paid are recorded
            gw.verdict()
        if gw.limit:
            outcome.status, outcome.message = AgentStatus.LIMIT, gw.limit
        return outcome

    def attempt(self, ctx: AgentContext, gw: Gateway | None) -> AgentOutcome:
        """Run the command once, behind ``gw`` when the agent has a model."""
        cfg, sandbox = self.config, ctx.sandbox
        if gw is not None and cfg.pass_env:
            raise InputError(f"pass_env {cfg.pass_env} would hand host variables to a command behind the model "
                             "gateway, which keeps the key on the host — drop pass_env")
        previous = _read(ctx, REQUIREMENT_FILE) if self.role is Role.ARCHITECT else None
        prompt = self.prompt(ctx)
        sandbox.write_file(PROMPT_FILE, prompt)
        fields = {
            "prompt": prompt, "prompt_file": PROMPT_FILE, "requirement_file": REQUIREMENT_FILE, "role": self.role.value,
            "iteration": ctx.iteration, "max_iterations": ctx.max_iterations, "model": self.model or "",
            **(placeholders() if gw is not None else {}),
        }  # fmt: skip
        preset = (PresetCall(cfg.preset, sandbox.visible_root, user_namespaces=getattr(sandbox, "user_namespaces", True))
                  if cfg.preset else None)
        if preset:
            fields.update(preset.fields())
        argv = _fill_template(cfg.command, fields, sandbox.workspace)
        env = preset.env(cfg.env, fields) if preset else dict(cfg.env)
        if preset:
            preset.prepare(sandbox, fields)
            argv = preset.wrap(argv)
        secrets = {name: os.environ[name] for name in cfg.pass_env if name in os.environ}
        mounts = {"installs": preset.installs()} if preset else {}
        if gw is None:
            result = sandbox.exec(argv, env={**env, **secrets}, timeout=cfg.timeout_s, **mounts)
        else:
            result = sandbox.exec(argv, env={**sandbox_env(), **env}, timeout=cfg.timeout_s, gateway=gw.endpoint, **mounts)
        scrub = _scrubber(secrets.values())
        if result.over_budget:  # the node discards its work (``discard_over_budget``)
            status, message = AgentStatus.LIMIT, "the command wrote more into the workspace than its budget allows"
        elif result.timed_out:
            status, message = AgentStatus.LIMIT, f"the command timed out after {cfg.timeout_s:g} s"
        elif result.exit_code != 0:
            status, message = AgentStatus.MODEL_ERROR, f"the command exited with code {result.exit_code}"
        else:
            status, message = AgentStatus.OK, "the command finished"
        if status is AgentStatus.OK and self.role is Role.ARCHITECT:
            status, message = self.check_requirement(ctx, previous)
        call = ModelCall(
            model=self.model or self.name,
            provider="command",
            latency_s=result.duration_s,
            finish_reason="over budget" if result.over_budget else "timeout" if result.timed_out else f"exit {result.exit_code}",
            error=None if result.ok else scrub(f"{message}: {result.stderr[-500:]}"),
        )
        step: dict[str, Any] = {
            "role": "command", "argv": [scrub(a) for a in argv], "exit_code": result.exit_code,
            "timed_out": result.timed_out, "over_budget": result.over_budget, "duration_s": result.duration_s,
            "stdout_tail": scrub(result.stdout[-TAIL_CHARS:]), "stderr_tail": scrub(result.stderr[-TAIL_CHARS:]),
        }  # fmt: skip
        if preset:
            usage, kept, answer = preset.after(sandbox.workspace, result.stdout)
            step.update(preset=cfg.preset.name, version=cfg.preset.version, cli_usage=asdict(usage) if usage else None,
                        cli_files={k: scrub(v) for k, v in kept.items()}, answer=scrub(answer))
        return AgentOutcome(status=status, message=message, calls=[call], trajectory=[step], seconds=result.duration_s)

    def prompt(self, ctx: AgentContext) -> str:
        """The role's SWE-CI system prompt followed by this iteration's task."""
        if self.role is Role.ARCHITECT:
            return f"{prompts.ARCHITECT_PROMPT}\n\n{prompts.architect_task(ctx)}\n"
        return f"{prompts.PROGRAMMER_PROMPT}\n\n{prompts.programmer_task(ctx, ctx.requirement)}\n"

    def check_requirement(self, ctx: AgentContext, previous: str | None) -> tuple[AgentStatus, str]:
        text = _read(ctx, REQUIREMENT_FILE)
        if text is None or text == previous:
            return AgentStatus.INVALID_OUTPUT, f"the command did not write {REQUIREMENT_FILE}"
        errors = validate_requirement(text)
        if errors:
            return AgentStatus.INVALID_OUTPUT, f"{REQUIREMENT_FILE} is invalid: " + "; ".join(errors)
        return AgentStatus.OK, "the command wrote a valid requirement.xml"


def _fill_template(template: list[str], fields: dict[str, Any], workspace: Path) -> list[str]:
    argv: list[str] = []
    for part in template:
        if part == "{source_files}":
            argv += source_files(workspace)
            continue
        try:
            argv.append(part.format(**fields))
        except (KeyError, IndexError, ValueError) as exc:
            raise InputError(
                f"the command template {template} has an unknown placeholder or stray brace ({exc}) — "
                f"use {{{', '.join(fields)}}} or {{source_files}}, and write literal braces as {{{{ and }}}}"
            ) from None
    return argv


SOURCE_LIMIT = 400  # {source_files}: at most this many (a CLI given a huge tree is given its top)


def source_files(workspace: Path) -> list[str]:
    """The workspace's files an editing CLI may be handed: not hidden, not tests, not links."""
    found: list[str] = []
    folders = [Path(".")]  # os.walk's order, with a stack: os.walk of Python 3.11 recurses once per folder
    while folders and len(found) < SOURCE_LIMIT:
        rel = folders.pop()
        try:
            with os.scandir(workspace / rel) as listing:
                entries = list(listing)
        except OSError:  # gone, unreadable, or a path too long to name: os.walk skips it too
            continue
        inner = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False) and not e.name.startswith(".")
                       and e.name not in ("tests", "test", "__pycache__"))
        folders += [rel / d for d in reversed(inner)]
        for entry in sorted((e for e in entries if not e.is_dir()), key=lambda e: e.name):
            name = entry.name
            if name.startswith(".") or entry.is_symlink() or name.startswith("test_") or name.endswith(".pyc"):
                continue
            found.append((rel / name).as_posix())
    return found[:SOURCE_LIMIT]


def _read(ctx: AgentContext, path: str) -> str | None:
    try:
        return ctx.sandbox.read_file(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None


def _scrubber(secrets: Any):
    values = [v for v in secrets if v]

    def scrub(text: str) -> str:
        for value in values:
            text = text.replace(value, "***")
        return text

    return scrub


__all__ = ["CommandAgent", "CommandConfig", "PROMPT_FILE"]
