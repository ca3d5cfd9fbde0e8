"""CommandAgent: an external CLI run in the sandbox from a command template."""

from __future__ import annotations

import sys

import pytest

from evoci.agents.base import REQUIREMENT_FILE, AgentContext, AgentStatus, Role
from evoci.agents.command import PROMPT_FILE, CommandAgent
from evoci.agents.requirement import Requirement, render_requirements
from evoci.domain import AgentConfig
from evoci.errors import InputError

from .conftest import API_KEY

VALID = render_requirements([Requirement("src/calc.py", "subtracts", "adds", "add(2, 3) == 5")])


def agent(role: Role, code: str, **options) -> CommandAgent:
    cfg = AgentConfig(kind="command", model="cli-model", options={"command": [sys.executable, "-c", code, "{prompt_file}", "{model}"], **options})
    return CommandAgent.from_config(role, cfg)


def test_the_programmer_command_edits_the_workspace(ctx: AgentContext) -> None:
    ctx.requirement = VALID
    code = "import sys; p = open(sys.argv[1]).read(); open('src/calc.py', 'w').write('# fixed\\n'); print('model', sys.argv[2], len(p))"
    outcome = agent(Role.PROGRAMMER, code).run(ctx)
    assert outcome.status is AgentStatus.OK
    assert ctx.sandbox.read_file("src/calc.py") == b"# fixed\n"
    prompt = ctx.sandbox.read_file(PROMPT_FILE).decode()
    assert "senior programmer" in prompt and "<contract>adds</contract>" in prompt
    (call,) = outcome.calls
    assert (call.provider, call.model, call.finish_reason, call.error) == ("command", "cli-model", "exit 0", None)
    assert outcome.trajectory[0]["stdout_tail"].startswith("model cli-model ")


def test_failure_and_timeout_are_outcomes(ctx: AgentContext) -> None:
    failed = agent(Role.PROGRAMMER, "import sys; sys.stderr.write('boom'); sys.exit(3)").run(ctx)
    assert failed.status is AgentStatus.MODEL_ERROR and failed.calls[0].finish_reason == "exit 3"
    assert "boom" in failed.calls[0].error
    slow = agent(Role.PROGRAMMER, "import time; time.sleep(30)", timeout_s=0.5).run(ctx)
    assert slow.status is AgentStatus.LIMIT and slow.calls[0].finish_reason == "timeout"


def test_an_architect_command_must_write_a_valid_requirement(ctx: AgentContext) -> None:
    write = f"open({REQUIREMENT_FILE!r}, 'w').write({VALID!r})"
    assert agent(Role.ARCHITECT, write).run(ctx).status is AgentStatus.OK
    again = agent(Role.ARCHITECT, "pass").run(ctx)  # the file is left from before: not written now
    assert again.status is AgentStatus.INVALID_OUTPUT and "did not write" in again.message
    bad = agent(Role.ARCHITECT, f"open({REQUIREMENT_FILE!r}, 'w').write('<requirements/>')").run(ctx)
    assert bad.status is AgentStatus.INVALID_OUTPUT and "1 to 5" in bad.message


def test_keys_are_passed_only_by_name_and_scrubbed_from_records(ctx: AgentContext) -> None:
    code = "import os; print('key=' + os.environ.get('OPENAI_API_KEY', 'none'))"
    hidden = agent(Role.PROGRAMMER, code).run(ctx)
    assert hidden.trajectory[0]["stdout_tail"].strip() == "key=none"
    passed = agent(Role.PROGRAMMER, code, pass_env=["OPENAI_API_KEY"]).run(ctx)
    assert passed.trajectory[0]["stdout_tail"].strip() == "key=***"
    assert API_KEY not in repr(passed)


def test_unknown_command_options_are_named() -> None:
    with pytest.raises(InputError, match=r"unknown option 'timeout' \(did you mean 'timeout_s'\?\)"):
        CommandAgent.from_config("programmer", AgentConfig(kind="command", options={"command": ["x"], "timeout": 5}))
    with pytest.raises(InputError, match="command"):
        CommandAgent.from_config("programmer", AgentConfig(kind="command", options={}))
