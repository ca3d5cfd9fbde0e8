"""Who solves a NITR step, and what each is shown: the step's TASK text and the code, nothing else.

    reference   applies one of the probe's reference solutions (option ``solution``: intended,
                shortcut, broken or no-build, or a map probe id → one of them; default intended):
                the embedded default and the sanity baseline proving every category is reachable
    command     an external agent CLI in the workspace (evoci.agents.command, NITR prompt)
    llm         agent mode: the tool loop of evoci.agents.llm with the NITR prompt
    api         API mode: one model call per step with every visible source file inlined;
                the answer must be ``{"files": [{"filename", "content"}]}``; anything else is
                recorded as ``invalid_output`` and nothing is written

Every kind gets a ``StepContext``: the step's TASK text and a sandbox over the workspace.
Later TASK files, the spec, the evaluator and other probes are never passed in.
"""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evoci import treefs
from evoci.agents.base import HARNESS_DIR, AgentOutcome, AgentStatus, ModelCall, Role
from evoci.agents.command import CommandAgent
from evoci.agents.llm.loop import AgentLoop
from evoci.agents.llm.roles import LLMAgent
from evoci.domain import AgentConfig
from evoci.errors import InputError
from evoci.nitr.loader import NitrProbe
from evoci.sandbox.base import Sandbox
from evoci.untrusted import json_loads, path_problem, storable

SOLUTIONS = ("intended", "shortcut", "broken", "no-build")

# The paper's setup (NITR §4, "Submission Format and Execution Setup"): the model sees the
# TASK text and the repository, "without hidden hints or additional maintainability
# instructions"; it cannot run commands. So the prompt states the job and nothing about design.
SYSTEM_PROMPT = """You are a software engineer working in an existing code repository.
Implement the task you are given by changing the repository's files. You cannot run the code or its tests."""

TOOLS_NOTE = """Use the tools to list, read and search the repository and to write or edit files.
When the task is done, answer with a short summary of what you changed."""

API_FORMAT = """Answer with one JSON object and nothing else:
{"files": [{"filename": "<path relative to the repository root>", "content": "<the whole new file>"}]}
List only files you create or change; each content replaces the whole file."""


@dataclass
class StepContext:
    """What an agent may know at one step. ``iteration``/``max_iterations`` name it for command templates."""

    probe_id: str
    step: int
    steps: int
    task_text: str
    sandbox: Sandbox
    visible_files: list[str] = field(default_factory=list)  # the code of step k − 1, workspace-relative
    requirement: str | None = None
    # Sees every model call as it is answered (the shared LLM roles read it); NITR keeps an
    # attempt's calls from its outcome, so nothing is attached here.
    on_call: Callable[[ModelCall], None] | None = None
    transcript: Path | None = None  # where a model gateway writes its request/response log (None: kept in memory)

    @property
    def iteration(self) -> int:
        return self.step

    @property
    def max_iterations(self) -> int:
        return self.steps


def step_prompt(ctx: StepContext) -> str:
    where = f" (step {ctx.step} of {ctx.steps})" if ctx.steps > 1 else ""
    return f"Your task{where}:\n\n{ctx.task_text.strip()}\n"


class ReferenceAgent:
    """Copies ``references/<probe>/<solution>/step<k>/`` over the workspace (falls back to ``intended``)."""

    name = "reference"

    def __init__(self, probe: NitrProbe, solution: str = "intended"):
        self.probe, self.solution = probe, solution
        self.root = Path(probe.suite) / "references" / probe.probe_id

    def run(self, ctx: StepContext) -> AgentOutcome:
        started = time.monotonic()
        if not self.root.is_dir():
            raise InputError(f"probe {self.probe.probe_id} has no references/ folder — the reference agent needs one")
        overlay = self.root / self.solution / f"step{ctx.step}"
        if not overlay.is_dir():
            overlay = self.root / "intended" / f"step{ctx.step}"
        written = []
        for path in sorted(p for p in overlay.rglob("*") if p.is_file()) if overlay.is_dir() else []:
            rel = path.relative_to(overlay).as_posix()
            ctx.sandbox.write_file(rel, path.read_bytes())
            written.append(rel)
        source = overlay.relative_to(self.root).as_posix() if overlay.is_dir() else "nothing"
        return AgentOutcome(status=AgentStatus.OK, message=f"applied {source}: {', '.join(written) or 'no files'}",
                            calls=[ModelCall(model=f"reference:{self.solution}", provider="replay")],
                            trajectory=[{"role": "reference", "solution": self.solution, "files": written}],
                            seconds=time.monotonic() - started)


class NitrCommandAgent(CommandAgent):
    """A command agent whose prompt file holds the NITR step prompt instead of a SWE-CI role prompt.

    A preset in read-only mode (NITR's agent mode as the paper ran it: the CLI reads the
    repository, writes nothing, runs nothing) answers ``{"files": [...]}``; evoci writes them.
    """

    def read_only(self) -> bool:
        return bool(self.config.preset and self.config.preset.read_only)

    def prompt(self, ctx: StepContext) -> str:  # type: ignore[override]
        if self.read_only():
            return f"{SYSTEM_PROMPT}\n\n{step_prompt(ctx)}\n{READ_ONLY_NOTE}\n{API_FORMAT}"
        return f"{SYSTEM_PROMPT}\n\n{step_prompt(ctx)}"

    def run(self, ctx: StepContext) -> AgentOutcome:  # type: ignore[override]
        outcome = super().run(ctx)  # type: ignore[arg-type]
        if self.read_only() and outcome.status is AgentStatus.OK:
            answer = next((s["answer"] for s in outcome.trajectory if isinstance(s, dict) and "answer" in s), "")
            outcome.status, outcome.message = materialize(answer, ctx.sandbox)
        return outcome


READ_ONLY_NOTE = "Read the repository's files as you need; do not change any file and do not run commands."


def materialize(answer: str, sandbox: Sandbox) -> tuple[AgentStatus, str]:
    """Write a ``{"files": [...]}`` answer into the workspace; ``invalid_output`` when it is not one."""
    files, problem = parse_files_answer(answer)
    if files is None:
        return AgentStatus.INVALID_OUTPUT, f"malformed answer: {problem}"
    for path, content in files.items():
        sandbox.write_file(path, content)
    return AgentStatus.OK, f"replaced {len(files)} file(s): {', '.join(sorted(files))}"


class NitrLLMAgent(LLMAgent):
    """Agent mode: the tool loop (browse, read, search, write, replace) with the NITR prompt."""

    role = Role.PROGRAMMER
    system_prompt = SYSTEM_PROMPT + "\n" + TOOLS_NOTE

    def work(self, loop: AgentLoop, ctx: StepContext) -> tuple[AgentStatus, str]:  # type: ignore[override]
        loop.messages.append({"role": "user", "content": step_prompt(ctx)})
        answer = loop.run()
        return AgentStatus.OK, f"edited {len(loop.bench.written)} files: {answer.strip()}"


def make_step_agent(config: AgentConfig, probe: NitrProbe):
    """The NITR agent ``config.kind`` names; a clear error for an unknown kind or solution."""
    kind = config.kind
    if kind == "replay":  # the embedded default of every protocol
        kind = "reference"
    if kind == "reference":
        chosen = config.options.get("solution", "intended")  # one name, or probe id → name
        solution = str(chosen.get(probe.probe_id, "intended") if isinstance(chosen, dict) else chosen)
        if solution not in SOLUTIONS:
            raise InputError(f"unknown reference solution {solution!r} — choose one of: {', '.join(SOLUTIONS)}")
        return ReferenceAgent(probe, solution)
    if kind == "command":
        return NitrCommandAgent.from_config(Role.PROGRAMMER, config)
    if kind == "llm":
        from evoci.agents.llm.roles import make_llm_agent

        return NitrLLMAgent(make_llm_agent(Role.PROGRAMMER, config).model)
    if kind == "api":
        from evoci.nitr.api_mode import ApiModeAgent

        return ApiModeAgent.from_agent_config(config)
    raise InputError(f"unknown NITR agent {config.kind!r} — choose one of: reference, command, llm, api")


def clear_harness_dir(workspace: Path) -> list[str]:
    """Remove ``.evoci`` whatever it is; return it if it was not the harness's folder (a link, a file)."""
    return [HARNESS_DIR] if treefs.remove(workspace, HARNESS_DIR) not in (None, "folder") else []


def parse_files_answer(text: str) -> tuple[dict[str, str] | None, str]:
    """API mode's answer as path → content (normalized: ``a//./b`` is ``a/b``), or None and what is wrong with it.

    One file no tree can hold makes the whole answer malformed (``invalid_output``, nothing
    written, the probe graded on the code as it was), as one without a string content always
    did: a name with a NUL, over 255 bytes a part or naming a folder (``.``, ``src/``), and text
    that is not valid Unicode (a lone surrogate, ``untrusted.storable`` says why it is not
    repaired). Checked before anything is written, so no answer is half applied and none makes
    the harness raise while it writes.
    """
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").split("\n", 1)[-1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0] if "```" in body else body
    try:
        data = json_loads(body)
    except json.JSONDecodeError as exc:
        return None, f"the answer is not JSON ({exc.msg})"
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not files:
        return None, 'the answer has no non-empty "files" list'
    result: dict[str, str] = {}
    for index, item in enumerate(files):
        if not isinstance(item, dict) or not isinstance(item.get("filename"), str) or not isinstance(item.get("content"), str):
            return None, f"files[{index}] needs string fields filename and content"
        name = item["filename"].strip()
        while name.startswith("./"):
            name = name[2:]
        parts = Path(name).parts
        if not name or Path(name).is_absolute() or ".." in parts or (parts and parts[0] in (HARNESS_DIR, ".git")):
            return None, f"files[{index}].filename {item['filename']!r} must be a path inside the repository"
        problem = path_problem(name)
        if problem:
            return None, f"files[{index}].filename {_shown(item['filename'])} {problem}"
        if name.endswith("/") or posixpath.normpath(name) == ".":
            return None, f"files[{index}].filename {item['filename']!r} names a folder, not a file"
        if not storable(item["content"]):
            return None, f"files[{index}].content is not valid text (a lone surrogate): no file can hold it"
        result[posixpath.normpath(name)] = item["content"]
    return result, ""


def _shown(name: str) -> str:
    return repr(name if len(name) <= 120 else name[:120] + "...")
