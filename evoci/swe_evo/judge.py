"""The failure taxonomy of SWE-EVO (arXiv 2512.18470, §5 and Appendix L): an optional LLM judge.

For each unresolved instance that has a prediction, a judge model reads the release notes,
the agent's trajectory, the grading's outcome and the failing target tests, and assigns
**exactly one** primary label of the paper's seven (the most fundamental cause when several
apply). The labels are qualitative diagnostics, not scores. A reply that names no valid label
is asked again once; if it still does not, the instance is recorded with status
``invalid_output`` and no label — never a guessed one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from evoci.agents.base import ModelCall
from evoci.agents.llm.client import ChatModel, ModelError, complete_with_retries
from evoci.untrusted import json_loads

# The paper's seven primary labels, each with evoci's one-line summary of its meaning.
LABELS: dict[str, str] = {
    "Syntax Error": "the patch breaks parsing, imports, indentation or similar, so the code cannot run",
    "Incorrect Implementation": "the patch changes a plausible place but the behaviour is wrong or incomplete",
    "Instruction Following": "the agent misread or departed from the release notes and solved a different task",
    "Tool-Use": "failed or wrong tool use blocked progress (bad edits, wrong paths, missed tests)",
    "Stuck in Loop": "the agent kept reading, editing or re-running without real progress",
    "Gave Up Prematurely": "the agent stopped or declared failure while sensible next steps remained",
    "Other": "a rare or ambiguous failure none of the other labels captures",
}
EVIDENCE_CHARS = 60_000  # the trajectory is cut in the middle beyond this

SYSTEM_PROMPT = (
    "You diagnose why a coding agent failed to implement a software release. Choose exactly one primary "
    "label — the most fundamental cause — from this list:\n"
    + "\n".join(f"- {name}: {meaning}" for name, meaning in LABELS.items())
    + '\nAnswer with one JSON object and nothing else: {"label": "<one label, spelled as above>", '
    '"reason": "<one or two sentences>"}'
)
REASK = 'That was not one JSON object with a "label" from the list. Answer again with exactly that object.'
_JSON = re.compile(r"\{.*\}", re.DOTALL)


@dataclass
class Judgement:
    """One instance's label (None when the judge gave no valid one) and the calls it cost."""

    label: str | None
    reason: str
    status: str  # ok | invalid_output | model_error
    calls: list[ModelCall] = field(default_factory=list)


def evidence(release_notes: str, grading_status: str, failing: list[tuple[str, str, str]], trajectory: list) -> str:
    """What the judge reads: the task, how grading ended, the failing targets, the trajectory."""
    steps = json.dumps(trajectory, default=str, indent=0)
    if len(steps) > EVIDENCE_CHARS:
        half = EVIDENCE_CHARS // 2
        steps = f"{steps[:half]}\n[… {len(steps) - EVIDENCE_CHARS} characters cut …]\n{steps[-half:]}"
    tests = "\n".join(f"- {role} {test_id}: {outcome}" for test_id, role, outcome in failing[:200])
    return (f"Release notes:\n{release_notes.strip()}\n\nGrading: {grading_status}\n\n"
            f"Target tests that did not pass ({len(failing)}):\n{tests or '(none listed)'}\n\n"
            f"The agent's trajectory (JSON):\n{steps or '(no trajectory recorded)'}\n")


def judge(model: ChatModel, text: str) -> Judgement:
    """Ask ``model`` for one label; one re-ask when the reply is not a valid label."""
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
    calls: list[ModelCall] = []
    reply = ""
    try:
        for attempt in range(2):
            turn = complete_with_retries(model, messages, [], calls.append)
            reply = turn.text or ""
            label, reason = _parse(reply)
            if label:
                return Judgement(label, reason, "ok", calls)
            messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": REASK}]
    except ModelError as exc:
        return Judgement(None, f"model error: {exc}", "model_error", calls)
    return Judgement(None, f"no valid label in the reply: {reply[:300]}", "invalid_output", calls)


def _parse(reply: str) -> tuple[str | None, str]:
    match = _JSON.search(reply)
    if not match:
        return None, ""
    try:
        value = json_loads(match.group(0))
    except json.JSONDecodeError:
        return None, ""
    label = value.get("label") if isinstance(value, dict) else None
    if label not in LABELS:
        return None, ""
    return label, str(value.get("reason") or "")
