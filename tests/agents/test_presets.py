"""Presets as a user meets them: installed CLIs listed, a missing one refused before anything runs
with the command that installs it, the CLI's version and flags in the run's identity (never the
key), NITR's read-only mode, and the official harness's retry rule recorded as an option."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from evoci.agents import install
from evoci.agents.cli_agent import resolve
from evoci.cli import main
from evoci.domain import AgentConfig, RunConfig
from evoci.errors import InputError

PINNED = {name: package.version for name, package in install.PACKAGES.items()}


def fake_install(tools: Path, name: str, version: str, script: str = "echo {version}") -> Path:
    """A stand-in installation laid out as `evoci agents install` lays it out (a program that
    prints its version): the checks around a CLI, not the CLI, are under test here."""
    package = install.PACKAGES[name]
    root = tools / f"{name}-{version}"
    program = root / ("node_modules/.bin" if package.manager == "npm" else "bin") / package.program
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\n" + script.format(version=version) + "\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    (root / install.MARKER).write_text(json.dumps({"name": name, "version": version, "package": package.package}))
    return program


@pytest.fixture
def tools(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    monkeypatch.setenv("EVOCI_TOOLS", str(folder))
    from evoci.agents.cli_agent import check_installed

    check_installed.cache_clear()
    yield folder
    check_installed.cache_clear()


def test_a_missing_cli_is_refused_before_the_run_starts_with_the_install_command(tools, tmp_path, capsys):
    home = tmp_path / "home"
    code = main(["run", "demo", "--agent", "codex", "--model", "gpt-5", "--home", str(home)])
    err = capsys.readouterr().err
    assert code == 2
    assert "the codex CLI 0.169.0 is not installed" in err and "run `evoci agents install codex`" in err
    assert not (home / "evoci.duckdb").exists() and not (home / "runs").exists()  # nothing ran, nothing recorded


def test_a_cli_that_does_not_start_is_refused_with_the_reinstall_command(tools, tmp_path, capsys):
    fake_install(tools, "aider", PINNED["aider"], script="echo 'ImportError: litellm' >&2; exit 1")
    code = main(["run", "demo", "--agent", "aider", "--model", "gpt-5", "--home", str(tmp_path / "home")])
    err = capsys.readouterr().err
    assert code == 2 and "does not start" in err and "ImportError: litellm" in err
    assert "evoci agents install aider" in err


def test_agents_list_shows_what_is_installed_and_how_to_install_the_rest(tools, capsys):
    program = fake_install(tools, "claude-code", PINNED["claude-code"])
    fake_install(tools, "claude-code", "2.0.0")
    assert main(["agents", "list"]) == 0
    out = capsys.readouterr().out
    assert f"claude-code     {PINNED['claude-code']} (pinned)  {program}" in out
    assert "claude-code     2.0.0  " in out
    assert f"codex           not installed (pinned {PINNED['codex']}: evoci agents install codex)" in out
    assert main(["agents", "list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted(i["version"] for i in listed) == sorted([PINNED["claude-code"], "2.0.0"])
    with pytest.raises(InputError, match="unknown agent CLI 'gemini' — evoci installs: claude-code, codex"):
        install.install("gemini")


def test_an_installed_cli_is_not_installed_again(tools, monkeypatch):
    fake_install(tools, "opencode", PINNED["opencode"])
    monkeypatch.setenv("PATH", "/nonexistent")  # npm cannot run: a second install would fail
    assert install.install("opencode").version == PINNED["opencode"]


def test_the_cli_version_flags_and_upstream_are_the_runs_identity_and_never_the_key(tools, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET-123")
    fake_install(tools, "claude-code", PINNED["claude-code"])
    fake_install(tools, "claude-code", "2.0.0")
    agent = AgentConfig(kind="claude-code", model="claude-sonnet-4-5")
    pinned = RunConfig(architect=resolve(agent), programmer=resolve(agent))
    options = pinned.programmer.options
    assert options["preset"]["version"] == PINNED["claude-code"] and options["name"] == f"claude-code@{PINNED['claude-code']}"
    assert "--dangerously-skip-permissions" in options["command"] and options["env"]["IS_SANDBOX"] == "1"
    assert options["gateway"] == {"provider": "anthropic", "base_url": "https://api.anthropic.com",
                                  "api_key_env": "ANTHROPIC_API_KEY"}
    assert "SECRET" not in json.dumps(pinned.identity())
    older = AgentConfig(kind="claude-code", model="claude-sonnet-4-5", options={"version": "2.0.0"})
    upgraded = RunConfig(architect=resolve(older), programmer=resolve(older))
    elsewhere = AgentConfig(kind="claude-code", model="claude-sonnet-4-5", options={"base_url": "http://10.0.0.5:4000"})
    proxied = RunConfig(architect=resolve(elsewhere), programmer=resolve(elsewhere))
    assert len({pinned.config_hash(), upgraded.config_hash(), proxied.config_hash()}) == 3


def test_a_run_recorded_with_one_cli_version_refuses_another(tools, tmp_path, capsys):
    fake_install(tools, "mini-swe-agent", PINNED["mini-swe-agent"])
    fake_install(tools, "mini-swe-agent", "2.0.0")
    from evoci.identity import check_run
    from evoci.store import Facts

    db = tmp_path / "evoci.duckdb"
    agent = AgentConfig(kind="mini-swe-agent", model="m")
    first = RunConfig(run_id="r", architect=resolve(agent), programmer=resolve(agent))
    Facts(db).run("r", protocol="swe-ci", dataset="demo", max_iterations=20, config_hash=first.config_hash(),
                  config=first.identity())
    check_run(db, "r", first, "demo")  # the same CLI resumes
    older = AgentConfig(kind="mini-swe-agent", model="m", options={"version": "2.0.0"})
    second = RunConfig(run_id="r", architect=resolve(older), programmer=resolve(older))
    from evoci.errors import DriftError

    with pytest.raises(DriftError, match=r"preset\.version: \"2\.4\.6\" → \"2\.0\.0\""):
        check_run(db, "r", second, "demo")


def test_nitr_runs_presets_read_only_and_refuses_a_cli_that_only_runs_commands(tools):
    fake_install(tools, "codex", PINNED["codex"])
    fake_install(tools, "mini-swe-agent", PINNED["mini-swe-agent"])
    codex = resolve(AgentConfig(kind="codex", model="gpt-5"), "nitr").options
    assert codex["preset"]["read_only"] is True and codex["command"][codex["command"].index("--sandbox") + 1] == "read-only"
    assert resolve(AgentConfig(kind="codex", model="gpt-5"), "swe-ci").options["preset"]["read_only"] is False
    with pytest.raises(InputError, match="mini-swe-agent acts only by running commands"):
        resolve(AgentConfig(kind="mini-swe-agent", model="m"), "nitr")


def test_in_a_sandbox_without_user_namespaces_codex_edits_with_its_own_sandbox_off(tools):
    # Docker refuses user namespaces, which Codex's bubblewrap sandbox needs: every command it ran
    # failed. There the container is the sandbox; elsewhere Codex keeps its own, as does read-only mode.
    from evoci.agents.cli_agent import PresetCall, PresetSpec

    for name in ("codex", "claude-code"):
        fake_install(tools, name, PINNED[name])

    def wrapped(kind: str, protocol: str, user_namespaces: bool) -> list[str]:
        options = resolve(AgentConfig(kind=kind, model="m"), protocol).options
        call = PresetCall(PresetSpec(**options["preset"]), "/workspace", user_namespaces=user_namespaces)
        return call.wrap(list(options["command"]))

    def mode(argv: list[str]) -> str:
        return argv[argv.index("--sandbox") + 1]

    assert mode(wrapped("codex", "swe-ci", user_namespaces=False)) == "danger-full-access"
    assert mode(wrapped("codex", "swe-ci", user_namespaces=True)) == "workspace-write"
    assert mode(wrapped("codex", "nitr", user_namespaces=False)) == "read-only"
    assert wrapped("claude-code", "swe-ci", False) == wrapped("claude-code", "swe-ci", True)


def test_preset_options_are_checked_by_name(tools):
    fake_install(tools, "opencode", PINNED["opencode"])
    with pytest.raises(InputError, match="takes no option max_steps — its options are: base_url, version"):
        resolve(AgentConfig(kind="opencode", model="m", options={"max_steps": 3}))
    with pytest.raises(InputError, match="needs --model"):
        resolve(AgentConfig(kind="opencode"))
    official = resolve(AgentConfig(kind="opencode", model="qwen3-coder", options={
        "base_url": "http://127.0.0.1:8000/v1", "max_try": 10}))  # the official SWE-CI setup's retry rule
    assert official.options["max_try"] == 10 and official.options["gateway"]["base_url"] == "http://127.0.0.1:8000/v1"
    config = json.loads(official.options["preset"]["home_files"][".config/opencode/opencode.json"])
    assert config["provider"]["custom"]["npm"] == "@ai-sdk/openai-compatible"
    assert config["provider"]["custom"]["options"]["baseURL"] == "{openai_base_url}"


def test_per_role_agents(tools, tmp_path):
    fake_install(tools, "aider", PINNED["aider"])
    from evoci.cli import build_parser
    from evoci.cli_common import run_config

    args = build_parser().parse_args(["run", "demo", "--architect-agent", "replay", "--programmer-agent", "aider",
                                      "--model", "gpt-5"])
    config = run_config(args)
    assert config.architect.kind == "replay"
    assert config.programmer.kind == "command" and config.programmer.options["preset"]["name"] == "aider"
    assert os.path.basename(config.programmer.options["command"][0]) == "{program}"


def test_what_the_agent_wrote_where_a_cli_keeps_its_usage_is_read_as_nothing_said(tools, tmp_path):
    # The CLI's HOME is in the agent's workspace: its trajectory file and output are the agent's to
    # write. A parser meeting a list, JSON nested too deeply or a number that is not one once
    # raised, failing the node as the harness's fault (retried, then the task left unscored).
    from evoci.agents.cli_agent import PresetCall, PresetSpec
    from evoci.agents.presets import HOME_DIR

    for name in ("mini-swe-agent", "claude-code"):
        fake_install(tools, name, PINNED[name])

    def after(kind: str, stdout: str, trajectory: str | None = None):
        workspace = tmp_path / kind / "workspace"
        (workspace / HOME_DIR).mkdir(parents=True, exist_ok=True)
        if trajectory is not None:
            (workspace / HOME_DIR / "mini-trajectory.json").write_text(trajectory)
        options = resolve(AgentConfig(kind=kind, model="m"), "swe-ci").options
        return PresetCall(PresetSpec(**options["preset"]), str(workspace)).after(workspace, stdout)

    deep = "[" * 100_000 + "]" * 100_000
    for hostile in ("[]", deep, '{"messages": [{"role": "assistant", "extra": []}]}',
                    '{"messages": [{"role": "assistant", "extra": {"response": {"usage": {"prompt_tokens": "x"}}}}]}'):
        usage, _, answer = after("mini-swe-agent", "", hostile)
        assert usage is None and answer == ""
    honest = '{"messages": [{"role": "assistant", "extra": {"response": {"usage": {"prompt_tokens": 7, "completion_tokens": 2}}}}]}'
    usage, _, _ = after("mini-swe-agent", "", honest)
    assert (usage.input_tokens, usage.output_tokens, usage.calls) == (7, 2, 1)
    for stdout in (deep, '{"type": "result", "usage": []}', '[{"type": "result"}]'):
        usage, _, answer = after("claude-code", stdout)
        assert isinstance(answer, str)
    # Parsed, but not numbers: compared with the gateway's account they raised TypeError.
    for stdout in ('{"type": "result", "total_cost_usd": "1.5", "usage": {"input_tokens": 1, "output_tokens": 1}}',
                   '{"type": "result", "usage": {"input_tokens": 1, "output_tokens": [[1]]}}'):
        assert after("claude-code", stdout)[0] is None
    usage, _, _ = after("claude-code", '{"type": "result", "total_cost_usd": 0.5, "usage": {"input_tokens": 3, "output_tokens": 1}}')
    assert usage is not None and usage.cost_usd == 0.5
