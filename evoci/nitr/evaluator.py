"""Run a NITR evaluator's pipeline over the agent's code and say what each module decided.

The grading tree (``grading_tree.build_grading_tree``) holds a copy of the agent's code,
the pristine starter code and the evaluator; the agent's workspace is never graded in
place. Command modules (build, unit_test, customized_check) run through the Sandbox
interface with the tree's root as working folder; file modules read the tree's copy.

Outcome rules:
- a ``build`` module that fails or times out ends grading: status ``build_error`` (E);
- ``unit_test`` passes when its command exits 0 within its timeout;
- ``customized_check`` passes by its JSON (``{"passed": …, "findings": […]}``, the C++
  convention) when its output ends with one, else by exit code 0 and no ``FAIL:`` line
  (the Python convention); a crash is the agent's outcome (the check failed);
- file modules pass when they have no finding.
A broken evaluator install (a file the pipeline names is missing, a program that cannot
start) raises ``NitrEvaluatorError``, an infrastructure error: it is retried, never scored.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from pydantic import BaseModel, Field

from evoci.errors import InfrastructureError
from evoci.nitr.file_checks import CHECKS
from evoci.nitr.pipeline import PLACEHOLDERS, Module, Pipeline
from evoci.sandbox.base import ExecResult, Sandbox

TAIL = 3000  # characters of a command's output kept per module
_NOT_STARTED = (126, 127)  # shells' "cannot execute" / "not found": the evaluator's tools are missing
# Output that means the harness never set the probe's build up, whatever the agent wrote:
# scoring it would turn evoci's fault into an F or an E.
_NOT_SET_UP = {
    "could not load cache": "its build folder was never configured (no CMakeCache.txt)",
    "No tests were found": "ctest found no test to run (the tests were never registered)",
}


class NitrEvaluatorError(InfrastructureError):
    """The evaluator could not run (missing file, missing tool): retried, never scored."""


class ModuleResult(BaseModel):
    name: str
    module_name: str
    role: str | None
    passed: bool
    findings: list[str] = Field(default_factory=list)
    exit_code: int | None = None
    timed_out: bool = False
    duration_s: float = 0.0
    output_tail: str = ""


class NitrGrade(BaseModel):
    """One grading of one step: ``status`` 'ok' or 'build_error', and every module's result."""

    status: str
    outcomes: dict[str, str] = Field(default_factory=dict, description="target id → 'passed' | 'failed'.")
    modules: list[ModuleResult] = Field(default_factory=list)
    duration_s: float = 0.0

    def summary(self) -> str:
        if self.status == "build_error":
            return "build error"
        passed = sum(1 for o in self.outcomes.values() if o == "passed")
        return f"{passed} of {len(self.outcomes)} checks passed"


def _check_verdict(result: ExecResult) -> tuple[bool, list[str]]:
    """A customized check's verdict: its trailing JSON object if it printed one, else PASS/FAIL lines."""
    out = result.stdout.strip()
    start = out.rfind("\n{") + 1 if not out.startswith("{") else 0
    try:
        data = json.loads(out[start:]) if out.endswith("}") else None
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("passed"), bool):
        findings = [str(f) if not isinstance(f, dict) else json.dumps(f, sort_keys=True) for f in data.get("findings", [])]
        return data["passed"] and result.ok, findings
    failed = [line.strip() for line in out.splitlines() if line.strip().startswith("FAIL")]
    if not result.ok and not failed:
        failed = [f"the check exited with code {result.exit_code}" if not result.timed_out else "the check timed out"]
    return result.ok and not failed, failed


def _run(sandbox: Sandbox, module: Module, places: dict[str, str], ceiling: float, output_limit: int) -> ModuleResult:
    result = sandbox.exec(module.argv(places), env={k: module.expand(v, places) for k, v in module.env.items()},
                          timeout=module.timeout(ceiling), output_limit=output_limit)
    if result.exit_code in _NOT_STARTED and not result.stdout.strip():
        raise NitrEvaluatorError(
            f"module {module.name!r} could not start {module.command[0]!r} (exit {result.exit_code}: "
            f"{result.stderr.strip()[-300:]}) — install the tool in the sandbox's environment or image")
    tail = (result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr)[-TAIL:]
    for marker, meaning in _NOT_SET_UP.items():
        if module.module_name in ("build", "unit_test") and marker in tail:
            raise NitrEvaluatorError(
                f"module {module.name!r}: {meaning} — the pipeline expects a build this evaluator does not "
                "provide (e.g. the public suite's top-level CMake project); give the module commands that "
                "configure and build it (see the built-in C++ probe)")
    if module.module_name == "customized_check":
        passed, findings = _check_verdict(result)
    else:
        passed = result.ok
        findings = [] if passed else ["timed out" if result.timed_out else f"exited with code {result.exit_code}"]
    return ModuleResult(name=module.name, module_name=module.module_name, role=module.role, passed=passed,
                        findings=findings, exit_code=result.exit_code, timed_out=result.timed_out,
                        duration_s=result.duration_s, output_tail=tail)


def evaluate(pipeline: Pipeline, sandbox: Sandbox, root: Path, *, ceiling_s: float, output_limit: int = 200_000,
             places: dict[str, str] = PLACEHOLDERS) -> NitrGrade:
    """Run every module of ``pipeline`` on the grading tree at ``root`` (the sandbox's root)."""
    started = time.monotonic()
    missing = [p for p in pipeline.evaluator_files(places) if not (root / p).exists()]
    if missing:
        raise NitrEvaluatorError(f"the evaluator is incomplete: {', '.join(missing)} missing from its folder "
                                 "— restore the probe's evaluator files")
    results: list[ModuleResult] = []
    for module in pipeline.modules:
        if module.module_name in CHECKS:
            t0 = time.monotonic()
            findings = CHECKS[module.module_name](module, root / places["case_root"], root / places["baseline_case_root"])
            results.append(ModuleResult(name=module.name, module_name=module.module_name, role=module.role,
                                        passed=not findings, findings=findings, duration_s=time.monotonic() - t0))
        else:
            results.append(_run(sandbox, module, places, ceiling_s, output_limit))
        if module.module_name == "build" and not results[-1].passed:
            return NitrGrade(status="build_error", modules=results, duration_s=time.monotonic() - started)
    outcomes = {f"{r.module_name}:{r.name}": "passed" if r.passed else "failed" for r in results if r.role}
    return NitrGrade(status="ok", outcomes=outcomes, modules=results, duration_s=time.monotonic() - started)
