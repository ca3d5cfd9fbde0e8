"""Presets: the agent CLIs the papers ran, each as a few facts evoci needs to run it headless.

A preset says, for one CLI: which package installs it (``evoci.agents.install``), which wire
protocol it speaks and the provider's public API and key variable, its headless command line
in **edit** mode (SWE-CI, SWE-EVO, SWE-Bench-CL) and, where the CLI has one, in **read-only**
mode (NITR's agent mode as the paper ran it: the repository readable, no writes, no commands,
the answer a ``{"files": [...]}`` JSON), the environment and config files it needs in a fresh
HOME, and where it reports its own usage. ``PresetAgent`` (``evoci.agents.cli_agent``) runs it.

Facts behind each line (flags, variables, wire protocols) were measured with the pinned
versions against evoci's scripted model server; the project's tests run every preset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evoci.gateway import CliUsage
from evoci.untrusted import json_loads



# The placeholders a preset's command line, environment and HOME files use. CommandAgent fills
# {program}, {model}, {prompt}, {prompt_file}, {home}, {source_files} (one argument per file) and
# the gateway's {gateway_url}, {openai_base_url}, {dummy_key}; literal braces are doubled.
HOME_DIR = ".evoci/agent-home"  # the CLI's HOME, under the workspace so its session store outlives the command


@dataclass(frozen=True)
class Preset:
    name: str
    wire: str  # anthropic-messages | openai-chat | openai-responses: what the gateway must serve
    public_base_url: str
    key_env: str
    argv: Callable[[bool], list[str]]  # read_only → the command template
    env: Callable[[bool], dict[str, str]] = lambda read_only: {}
    home_files: Callable[[bool], dict[str, str]] = lambda read_only: {}  # HOME-relative path → content
    usage: Callable[[str, dict[str, str]], CliUsage | None] = lambda stdout, files: None
    answer: Callable[[str, dict[str, str]], str] = lambda stdout, files: stdout  # read-only mode's final text
    read_only: bool = True  # has a mode with no writes and no command execution
    kept: tuple[str, ...] = field(default_factory=tuple)  # HOME-relative files kept as the CLI's transcript
    # The filled command line where the sandbox gives commands no user namespaces (Docker), for a
    # CLI whose own sandbox needs them: there the sandbox is evoci's alone.
    without_userns: Callable[[list[str]], list[str]] = lambda argv: argv


# -- Claude Code ---------------------------------------------------------------------------


def _claude_argv(read_only: bool) -> list[str]:
    # The prompt first: --allowedTools takes every argument after it as a tool name.
    argv = ["{program}", "-p", "{prompt}", "--model", "{model}", "--output-format", "json"]
    if read_only:
        return [*argv, "--allowedTools", "Read,Glob,Grep,LS"]  # the paper's `--allowedTools Read`, plus search
    return [*argv, "--dangerously-skip-permissions"]


def _claude_env(read_only: bool) -> dict[str, str]:
    # As root, --dangerously-skip-permissions wants IS_SANDBOX=1 (evoci's sandbox is one).
    return {"ANTHROPIC_BASE_URL": "{gateway_url}", "ANTHROPIC_API_KEY": "{dummy_key}", "IS_SANDBOX": "1",
            "CLAUDE_CONFIG_DIR": "{home}/.claude", "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1"}  # fmt: skip


def _claude_usage(stdout: str, files: dict[str, str]) -> CliUsage:
    result = _last_json(stdout, lambda d: d.get("type") == "result")
    usage = (result or {}).get("usage") or {}
    if not usage:
        return None
    cached = usage.get("cache_read_input_tokens")
    # Anthropic's input_tokens excludes cache reads and writes; the gateway counts all input.
    total_in = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    return CliUsage("claude -p --output-format json", total_in, usage.get("output_tokens"), cached,
                    result.get("total_cost_usd"))  # num_turns is not its number of requests


def _claude_answer(stdout: str, files: dict[str, str]) -> str:
    return str((_last_json(stdout, lambda d: d.get("type") == "result") or {}).get("result", ""))


# -- Codex CLI -----------------------------------------------------------------------------

_CODEX_PROVIDER = "evoci"
_CODEX_KEY_VAR = "EVOCI_CODEX_KEY"
_CODEX_LAST = "codex-last-message.txt"


def _codex_argv(read_only: bool) -> list[str]:
    # Doubled braces: the template is filled with str.format.
    provider = (f'model_providers.{_CODEX_PROVIDER}={{{{name="{_CODEX_PROVIDER}", base_url="{{openai_base_url}}", '
                f'wire_api="responses", env_key="{_CODEX_KEY_VAR}"}}}}')
    argv = ["{program}", "exec", "--json", "--skip-git-repo-check", "--model", "{model}",
            "-c", f"model_provider={_CODEX_PROVIDER}", "-c", provider,
            "--output-last-message", "{home}/" + _CODEX_LAST]  # fmt: skip
    # Codex's own sandbox works inside evoci's: read-only for NITR, workspace writes otherwise.
    argv += ["--sandbox", "read-only" if read_only else "workspace-write"]
    return [*argv, "{prompt}"]


def _codex_without_userns(argv: list[str]) -> list[str]:
    # Codex's Linux sandbox is bubblewrap, which needs a user namespace (its legacy Landlock mode
    # refuses a restricted file system too); without one every command it runs fails with "No
    # permissions to create a new namespace". In edit mode it writes only the workspace anyway,
    # so `danger-full-access` leaves the container (no network, a read-only installation) as the
    # sandbox. Read-only mode has no such substitute and is left as it is.
    return ["danger-full-access" if arg == "workspace-write" else arg for arg in argv]


def _codex_env(read_only: bool) -> dict[str, str]:
    return {"CODEX_HOME": "{home}/.codex", _CODEX_KEY_VAR: "{dummy_key}"}


def _codex_files(read_only: bool) -> dict[str, str]:
    return {".codex/config.toml": "# evoci: the provider and model come from -c options on the command line\n"}  # CODEX_HOME must exist


def _codex_usage(stdout: str, files: dict[str, str]) -> CliUsage:
    turns = [d.get("usage") or {} for d in _json_lines(stdout) if d.get("type") == "turn.completed"]
    if not turns:
        return None
    return CliUsage("codex exec --json turn.completed", sum(int(t.get("input_tokens") or 0) for t in turns),
                    sum(int(t.get("output_tokens") or 0) for t in turns),
                    sum(int(t.get("cached_input_tokens") or 0) for t in turns))


def _codex_answer(stdout: str, files: dict[str, str]) -> str:
    return files.get(_CODEX_LAST, "")


# -- OpenCode (the official SWE-CI harness's agent) ----------------------------------------


def _opencode_argv(read_only: bool) -> list[str]:
    return ["{program}", "run", "--format", "json", "--model", "custom/{model}", "{prompt}"]


def _opencode_files(read_only: bool) -> dict[str, str]:
    # As the official SWE-CI harness seeds it: a `custom` OpenAI-compatible provider with one model.
    # HOME files are filled by name (not str.format): JSON braces stay as they are.
    permission: Any = {"edit": "deny", "bash": "deny", "webfetch": "deny"} if read_only else "allow"
    config = {"$schema": "https://opencode.ai/config.json", "permission": permission,
              "provider": {"custom": {"npm": "@ai-sdk/openai-compatible", "name": "custom",
                                      "options": {"baseURL": "{openai_base_url}"},
                                      "models": {"{model}": {"name": "{model}"}}}}}  # fmt: skip
    auth = {"custom": {"type": "api", "key": "{dummy_key}"}}
    return {".config/opencode/opencode.json": json.dumps(config, indent=2) + "\n",
            ".local/share/opencode/auth.json": json.dumps(auth, indent=2) + "\n"}


def _opencode_env(read_only: bool) -> dict[str, str]:
    return {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1", "DISABLE_SEND_PV": "1"}


def _opencode_usage(stdout: str, files: dict[str, str]) -> CliUsage:
    steps = [(d.get("part") or {}) for d in _json_lines(stdout) if d.get("type") == "step_finish"]
    if not steps:
        return None
    tokens = [s.get("tokens") or {} for s in steps]
    cache = [t.get("cache") or {} for t in tokens]
    return CliUsage("opencode run --format json step_finish",
                    sum(int(t.get("input") or 0) + int(c.get("read") or 0) + int(c.get("write") or 0) for t, c in zip(tokens, cache)),
                    sum(int(t.get("output") or 0) + int(t.get("reasoning") or 0) for t in tokens),
                    sum(int(c.get("read") or 0) for c in cache), sum(float(s.get("cost") or 0) for s in steps))


def _opencode_answer(stdout: str, files: dict[str, str]) -> str:
    return "".join(str((d.get("part") or {}).get("text", "")) for d in _json_lines(stdout) if d.get("type") == "text")


# -- mini-swe-agent ------------------------------------------------------------------------

_MINI_TRAJ = "mini-trajectory.json"


def _mini_argv(read_only: bool) -> list[str]:
    return ["{program}", "-y", "--exit-immediately", "-m", "openai/{model}", "-t", "{prompt}", "-o", "{home}/" + _MINI_TRAJ]


def _mini_env(read_only: bool) -> dict[str, str]:
    # litellm's cost map would be fetched from the network; the gateway prices calls anyway.
    return {"MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def _mini_usage(stdout: str, files: dict[str, str]) -> CliUsage:
    try:
        traj = json_loads(files.get(_MINI_TRAJ, ""))
    except ValueError:
        return None
    usages = [((m.get("extra") or {}).get("response") or {}).get("usage") or {} for m in traj.get("messages", [])
              if isinstance(m, dict) and m.get("role") == "assistant"]
    usages = [u for u in usages if u]
    if not usages:
        return None
    return CliUsage("mini-swe-agent trajectory", sum(int(u.get("prompt_tokens") or 0) for u in usages),
                    sum(int(u.get("completion_tokens") or 0) for u in usages), calls=len(usages))


# -- aider ---------------------------------------------------------------------------------

_AIDER_HISTORY = "aider-chat.md"


def _aider_argv(read_only: bool) -> list[str]:
    # Without git aider sees no file it is not given: the workspace's source files are its chat.
    argv = ["{program}", "--model", "openai/{model}", "--openai-api-base", "{openai_base_url}",
            "--message-file", "{prompt_file}", "--yes-always", "--no-git", "--no-stream", "--no-pretty",
            "--no-check-update", "--no-show-release-notes", "--analytics-disable", "--no-suggest-shell-commands",
            "--no-detect-urls", "--no-show-model-warnings", "--no-auto-lint", "--no-auto-test", "--edit-format", "whole", "--map-tokens", "0",
            "--chat-history-file", "{home}/" + _AIDER_HISTORY, "--input-history-file", "{home}/aider-input.txt"]  # fmt: skip
    if read_only:  # ask mode answers without editing; the files are context only
        return [*argv, "--chat-mode", "ask", "--dry-run", "{source_files}"]
    return [*argv, "{source_files}"]


_AIDER_TOKENS = re.compile(r"Tokens: ([\d.,]+)(k?) sent, ([\d.,]+)(k?) received")


def _aider_env(read_only: bool) -> dict[str, str]:
    return {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # else litellm fetches its price list from the network


def _aider_usage(stdout: str, files: dict[str, str]) -> CliUsage:
    found = _AIDER_TOKENS.findall(stdout)
    if not found:
        return None

    def n(value: str, k: str) -> int:
        return round(float(value.replace(",", "")) * (1000 if k else 1))

    # aider rounds above 1,000 ("1.2k"): a cross-check, not an account.
    return CliUsage("aider stdout", sum(n(a, b) for a, b, _, _ in found), sum(n(c, d) for _, _, c, d in found))


def _aider_answer(stdout: str, files: dict[str, str]) -> str:
    # Ask mode's reply, as its chat history keeps it (its console output wraps long lines):
    # the last {"files"} object in it (the history also holds the prompt, which shows the format).
    text = files.get(_AIDER_HISTORY) or stdout
    start = text.rfind('{"files"')
    return text[start : text.rfind("}") + 1] if start >= 0 else text


PRESETS: dict[str, Preset] = {
    "claude-code": Preset("claude-code", "anthropic-messages", "https://api.anthropic.com", "ANTHROPIC_API_KEY",
                          _claude_argv, _claude_env, usage=_claude_usage, answer=_claude_answer, kept=(".claude",)),
    "codex": Preset("codex", "openai-responses", "https://api.openai.com/v1", "OPENAI_API_KEY", _codex_argv, _codex_env,
                    _codex_files, usage=_codex_usage, answer=_codex_answer, kept=(".codex/sessions", _CODEX_LAST),
                    without_userns=_codex_without_userns),
    "opencode": Preset("opencode", "openai-chat", "https://api.openai.com/v1", "OPENAI_API_KEY", _opencode_argv,
                       _opencode_env, _opencode_files, _opencode_usage, _opencode_answer, kept=(".local/share/opencode/opencode.db", ".local/share/opencode/log")),
    "mini-swe-agent": Preset("mini-swe-agent", "openai-chat", "https://api.openai.com/v1", "OPENAI_API_KEY", _mini_argv,
                             _mini_env, usage=_mini_usage, read_only=False, kept=(_MINI_TRAJ,)),
    "aider": Preset("aider", "openai-chat", "https://api.openai.com/v1", "OPENAI_API_KEY", _aider_argv, _aider_env,
                    usage=_aider_usage, answer=_aider_answer, kept=(_AIDER_HISTORY,)),
}


def _json_lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json_loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                out.append(value)
    return out


def _last_json(text: str, keep: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
    found = [d for d in _json_lines(text) if keep(d)]
    if not found:
        try:
            whole = json_loads(text)
        except ValueError:
            return None
        found = [whole] if isinstance(whole, dict) and keep(whole) else []
    return found[-1] if found else None


__all__ = ["HOME_DIR", "PRESETS", "Preset"]
