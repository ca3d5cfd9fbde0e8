"""The architect's input folder: ``.evoci/non-passed/`` (SWE-CI's non-passed tests).

``summary.jsonl`` has one line per non-passed target test — its id, outcome and a
one-line reason — in the order the SWE-CI priority rules suggest (error before failed
before missing). Each test also gets a detail file with its full report text. Paths are
relative to the workspace; no host path is ever written (an official-harness mistake).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from evoci.agents.base import NON_PASSED_DIR
from evoci.domain import TestReport
from evoci.sandbox.base import Sandbox

# error/collection/import problems first, then failures, then tests that never ran.
SEVERITY = {"error": 0, "missing": 2, "failed": 1, "xpassed": 1, "skipped": 2, "xfailed": 2}


@dataclass(frozen=True)
class NonPassed:
    test_id: str
    outcome: str
    reason: str
    detail_file: str

    def as_json(self) -> dict[str, str]:
        return {"test_id": self.test_id, "outcome": self.outcome, "reason": self.reason, "detail": self.detail_file}


# pytest's hints, not a failure's reason.
_NOISE = re.compile(r"^(Use -v to get (more|the full) diff|Full diff:|\.\.\.Full output truncated)")


def _reason(text: str, outcome: str) -> str:
    """The most telling line of a failure text: the last `E ` line, else the last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln[1:].strip() for ln in lines if ln.startswith("E ") and not _NOISE.match(ln[1:].strip())]
    if errors:
        return errors[-1][:300]
    if lines:
        return lines[-1][:300]
    return {"missing": "not collected: the test is absent from the report (collection or import failure?)"}.get(
        outcome, outcome
    )


def _detail_name(test_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", test_id)[:80]
    return f"{slug}-{hashlib.sha1(test_id.encode()).hexdigest()[:8]}.txt"


def non_passed(report: TestReport, targets: list[str]) -> list[NonPassed]:
    """The target tests that did not pass, most severe first, then by id."""
    outcomes = report.outcomes_for(targets)
    collection = "\n\n".join(f"{k}:\n{v}" for k, v in sorted(report.collection_errors.items()))
    items = []
    for test_id, outcome in outcomes.items():
        if outcome == "passed":
            continue
        module = test_id.split("::", 1)[0]
        text = report.details.get(test_id) or report.collection_errors.get(module) or (
            collection if outcome == "missing" else ""
        )
        items.append(NonPassed(test_id, outcome, _reason(text, outcome), f"{NON_PASSED_DIR}/{_detail_name(test_id)}"))
    return sorted(items, key=lambda n: (SEVERITY.get(n.outcome, 3), n.test_id))


def write_non_passed(sandbox: Sandbox, report: TestReport, targets: list[str]) -> list[NonPassed]:
    """Write the folder into the workspace; return what it lists."""
    items = non_passed(report, targets)
    module_errors = report.collection_errors
    for item in items:
        module = item.test_id.split("::", 1)[0]
        body = report.details.get(item.test_id) or module_errors.get(module) or "\n\n".join(module_errors.values())
        sandbox.write_file(
            item.detail_file,
            f"test: {item.test_id}\noutcome: {item.outcome}\nreason: {item.reason}\n\n{body}\n",
        )
    sandbox.write_file(f"{NON_PASSED_DIR}/summary.jsonl", "".join(json.dumps(i.as_json()) + "\n" for i in items))
    return items


def read_summary(sandbox: Sandbox) -> list[dict[str, str]]:
    """The summary lines an architect reads."""
    text = sandbox.read_file(f"{NON_PASSED_DIR}/summary.jsonl").decode()
    return [json.loads(line) for line in text.splitlines() if line.strip()]
