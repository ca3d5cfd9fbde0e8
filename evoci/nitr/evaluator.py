"""Run a NITR evaluator's pipeline over the agent's code and say what each module decided.

The grading tree (``grading_tree.build_grading_tree``) holds a copy of the agent's code,
the pristine starter code and the evaluator; the agent's workspace is never graded in
place. Command modules (build, unit_test, customized_check) run through the Sandbox
interface, in their ``cwd`` under the tree's root; file modules read the tree's copy.

Outcome rules, the public evaluator's (every module runs, in order, whatever failed before):
- a module whose command exits non-zero (or times out) fails;
- a ``build`` module first configures the CMake project when the pipeline names a
  ``build_dir`` and nothing configured it yet; a failed build makes the probe ``build_error``
  (E), and its functional and structural results are kept in ``modules`` only;
- a ``unit_test`` also fails when it reports fewer tests than expected (``min_expected_tests``,
  1 for ``ctest``): "No tests were found!!!" or "Total Tests: N";
- ``customized_check`` passes by exit code 0 (its printed findings are kept);
- file modules pass when they have no finding.
Infrastructure is what the harness proves, never what the tested code prints: a broken
evaluator install (a file the pipeline names is missing; a program that exits 126/127 and a
harness-run lookup confirms the sandbox does not have it: ``evoci.grading.run.run_proven``)
raises ``NitrEvaluatorError``, retried and never scored. Everything else is the agent's outcome.

This is NITR's plug-in to the one grading path (``evoci.grading``): the tree is
``evoci.nitr.trees``'s, the commands run by ``run_proven``, the outcomes are the modules'.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, Field

from evoci.errors import InfrastructureError
from evoci.grading.run import run_proven
from evoci.nitr.file_checks import CHECKS, run_check
from evoci.nitr.pipeline import PLACEHOLDERS, Module, Pipeline, Places
from evoci.nitr.trees import restore_tree
from evoci.sandbox.base import ExecResult, Sandbox
from evoci.untrusted import json_loads

TAIL = 3000  # characters of a command's output kept per module
_NO_TESTS = "No tests were found!!!"
_TOTAL = re.compile(r"Total Tests:\s*(\d+)")


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


def _printed_findings(out: str) -> list[str]:
    """A check's own findings, for the record: its trailing JSON's, else its FAIL lines."""
    out = out.strip()
    start = out.rfind("\n{") + 1 if not out.startswith("{") else 0
    try:
        data = json_loads(out[start:]) if out.endswith("}") else None
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("findings"), list):
        return [f if isinstance(f, str) else json.dumps(f, sort_keys=True) for f in data["findings"]]
    return [line.strip() for line in out.splitlines() if line.strip().startswith("FAIL")]


def _too_few_tests(module: Module, argv: list[str], result: ExecResult) -> str | None:
    expected = module.settings.get("min_expected_tests")
    if expected is None:
        expected = 1 if argv and PurePosixPath(argv[0]).name == "ctest" else 0
    text = f"{result.stdout}\n{result.stderr}"
    if expected > 0 and _NO_TESTS in text:
        return f"no tests were found; expected at least {expected}"
    found = _TOTAL.search(text)
    # The tested code prints here too: a count of thousands of digits is past int()'s limit.
    count = found.group(1).lstrip("0") or "0" if found else ""
    if expected > 0 and found and len(count) <= 18 and int(count) < expected:
        return f"only {count} tests ran; expected at least {expected}"
    return None


def _exec(sandbox: Sandbox, module: Module, argv: list[str], env: dict[str, str], places: Places, ceiling: float,
          output_limit: int, root: Path) -> ExecResult:
    def missing(text: str) -> NitrEvaluatorError:
        return NitrEvaluatorError(f"module {module.name!r}: {text}")

    def reclaim() -> None:  # the tested code may have locked the tree's root (chmod 000)
        os.chmod(root, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)

    return run_proven(sandbox, argv, env=env, cwd=module.cwd(places), timeout=module.timeout(ceiling),
                      output_limit=output_limit, missing=missing, reclaim=reclaim)


def _run(sandbox: Sandbox, pipeline: Pipeline, module: Module, root: Path, places: Places, ceiling: float,
         output_limit: int) -> ModuleResult:
    env = {**pipeline.env, **{k: module.expand(v, places) for k, v in module.env.items()}}
    argv = module.argv(places)
    runs = []
    if module.module_name == "build" and pipeline.configures_build \
            and not (root / places["build_dir"] / "CMakeCache.txt").is_file():
        configure = ["cmake", "-S", places["repo_root"], "-B", places["build_dir"], *module.configure_args(places)]
        runs.append(_exec(sandbox, module, configure, env, places, ceiling, output_limit, root))
    if not runs or runs[0].ok:
        runs.append(_exec(sandbox, module, argv, env, places, ceiling, output_limit, root))
    result = runs[-1]
    tail = (result.stdout + ("\n" if result.stdout and result.stderr else "") + result.stderr)[-TAIL:]
    findings = [] if result.ok else ["timed out" if result.timed_out else f"exited with code {result.exit_code}"]
    if module.module_name == "unit_test" and (short := _too_few_tests(module, argv, result)):
        findings.append(short)
    if module.module_name == "customized_check" and not result.ok:
        findings += _printed_findings(result.stdout)
    return ModuleResult(name=module.name, module_name=module.module_name, role=module.role, passed=not findings,
                        findings=findings, exit_code=result.exit_code, timed_out=result.timed_out,
                        duration_s=sum(r.duration_s for r in runs), output_tail=tail)


def evaluate(pipeline: Pipeline, sandbox: Sandbox, root: Path, *, ceiling_s: float, output_limit: int = 200_000,
             places: Places = PLACEHOLDERS, pristine: Path | None = None) -> NitrGrade:
    """Run every module of ``pipeline`` on the grading tree at ``root`` (the sandbox's root).

    ``pristine`` is the same tree never given to a sandbox: the file checks read it, since the
    tested code may rewrite ``root`` while it runs, and ``root`` is put back from it (its build
    folder aside) before each command module after the first, so no module reads what an earlier
    one's tested code left in the evaluator, the baseline or the sources.
    """
    started = time.monotonic()
    missing = [p for p in pipeline.evaluator_files(places) if not (root / p).exists()]
    if missing:
        raise NitrEvaluatorError(f"the evaluator is incomplete: {', '.join(missing)} missing from its folder "
                                 "— restore the probe's evaluator files")
    results: list[ModuleResult] = []
    ran = False
    for module in pipeline.modules:
        if module.module_name in CHECKS:
            t0 = time.monotonic()
            # the build folder is the tested code's output either way: read where the build left it
            checked = {**places, "build_dir": str(root / places["build_dir"])} if pristine else places
            findings = run_check(module, pristine or root, checked)
            results.append(ModuleResult(name=module.name, module_name=module.module_name, role=module.role,
                                        passed=not findings, findings=findings, duration_s=time.monotonic() - t0))
        else:
            if ran and pristine is not None:
                restore_tree(root, pristine, places["build_dir"])
            results.append(_run(sandbox, pipeline, module, root, places, ceiling_s, output_limit))
            ran = True
    if any(r.module_name == "build" and not r.passed for r in results):
        return NitrGrade(status="build_error", modules=results, duration_s=time.monotonic() - started)
    outcomes = {f"{r.module_name}:{r.name}": "passed" if r.passed else "failed" for r in results if r.role}
    return NitrGrade(status="ok", outcomes=outcomes, modules=results, duration_s=time.monotonic() - started)
