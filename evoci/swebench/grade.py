"""Grade one prediction the SWE-bench way, shared by SWE-EVO and SWE-Bench-CL.

clean base → the agent's patch (applied or not, recorded; an empty patch is *no
prediction*, not "applied") → test files restored, ``test_patch`` applied, start-up hooks
removed (``tree``) → the record's test command in the sandbox → per-test outcomes from
the record's log parser (``parsers``), one per target test (``missing`` when absent).

How a grading ends (``Grade.status``):

=====================================  =============================================
``no_prediction``                      empty or missing patch: nothing is tested
``not_applied``                        the patch does not apply to the clean base
``timeout``                            the test command hit its timeout
``agent_error``                        no test result could be read and the
                                       environment's canary passed (the code broke the run)
``ok``                                 outcomes were read
=====================================  =============================================

A broken environment (the canary ``python -I -c "import pytest"`` fails) raises
``SandboxError``, and a lost exit status ``HarnessTimeout``; a record whose ``test_patch`` does
not apply raises ``InputError``. A test process that died by a signal is the code's outcome when
the canary passes (evoci's grading integrity rule: only what the harness can prove is
infrastructure, so code that kills its own test run cannot turn its grade into a retry).
"""

from __future__ import annotations

import secrets
import shlex
from collections.abc import Callable
from pathlib import Path

import git
from pydantic import BaseModel, Field

from evoci.errors import HarnessTimeout, SandboxError
from evoci.sandbox.base import ExecResult, Sandbox
from evoci.swebench.parsers import get_parser, uses_json_report
from evoci.swebench.tree import RUNNER_CONFIG_FILE, is_test_code, make_base_tree, make_grading_tree

TAIL_LINES = 60
OUTPUT_LIMIT = 32_000_000  # -rA summaries of big suites run to megabytes; the summary is at the end
_CANARY_TIMEOUT_S = 120.0


class GradeRequest(BaseModel):
    """What grading one prediction needs (all of it harness-side)."""

    base_sha: str
    patch: str | None = Field(description="The agent's patch; None or blank = no prediction.")
    test_patch: str = ""
    test_cmds: str
    log_parser: str
    targets: list[str]
    pytest_plugins: list[str] = Field(default_factory=list, description="Loaded with -p; autoloading stays off.")
    autoload_plugins: bool = Field(False, description="Leave pytest's plugin autoloading on (the record asks for it).")
    pythonpath: list[str] = Field(default_factory=lambda: ["src", "."])
    timeout_s: float
    base_only: bool = Field(False, description="Test the clean base + test_patch (the environment's proof), no patch.")


class Grade(BaseModel):
    """The graded outcome of one prediction."""

    status: str
    patch_applied: bool | None = None
    apply_method: str | None = None
    outcomes: dict[str, str] = Field(default_factory=dict, description="Every target id → outcome or 'missing'.")
    overridden: list[str] = Field(default_factory=list, description="Agent paths grading restored or removed.")
    collisions: dict[str, int] = Field(default_factory=dict, description="Ids several tests were truncated to.")
    integrity_flags: list[str] = Field(default_factory=list, description="Added source lines that reach into the runner.")
    exit_code: int | None = None
    duration_s: float = 0.0
    output_tail: str = ""


def grade(request: GradeRequest, source: git.Repo, tree_path: Path,
          open_tree: Callable[[Path], Sandbox]) -> Grade:
    """Grade ``request.patch`` in a fresh tree at ``tree_path``; ``open_tree`` opens a sandbox over it."""
    parse = get_parser(request.log_parser)  # an unknown parser is bad input: fail before building anything
    if request.base_only:
        tree = make_base_tree(tree_path, source, request.base_sha, request.test_patch)
    else:
        tree = make_grading_tree(tree_path, source, request.base_sha, request.patch, request.test_patch)
    if tree.patch_applied is None:
        return Grade(status="no_prediction")
    if not tree.patch_applied:
        return Grade(status="not_applied", patch_applied=False, output_tail=tree.apply_error[-4000:])
    report = f".evoci/report-{secrets.token_hex(6)}.json"
    sandbox = open_tree(tree.path)
    try:
        result = sandbox.exec(["bash", "-c", request.test_cmds], env=_test_env(request, report, sandbox.visible_root),
                              timeout=request.timeout_s, output_limit=OUTPUT_LIMIT)
        log = _read(sandbox, report) if uses_json_report(request.log_parser) else f"{result.stdout}\n{result.stderr}"
        parsed = parse(log)
        common = dict(patch_applied=True, apply_method=tree.apply_method, overridden=tree.overridden,
                      integrity_flags=sabotage_flags(request.patch or "", request.pythonpath),
                      exit_code=result.exit_code, duration_s=result.duration_s, output_tail=_tail(result))
        if result.timed_out:
            return Grade(status="timeout", **common)
        if result.exit_code is None:
            raise HarnessTimeout(f"the sandbox lost the test command's exit status; output ends:\n{_tail(result)}")
        if not parsed.outcomes:
            _require_canary(sandbox, _tail(result))
        status = "ok" if parsed.outcomes or result.exit_code in (0, 1, 5) else "agent_error"
        outcomes = {t: parsed.outcomes.get(t, "missing") for t in request.targets}
        return Grade(status=status, outcomes=outcomes, collisions=dict(parsed.collisions), **common)
    finally:
        sandbox.cleanup()


def sabotage_flags(patch: str, pythonpath: list[str]) -> list[str]:
    """The integrity flags (``evoci.grading.sabotage``) of every line the patch adds outside test code.

    In-process sabotage of the runner cannot be prevented, only flagged for a person to read;
    the rules are the SWE-CI test node's, applied to a patch instead of two commits.
    """
    from evoci.grading.sabotage import flags_in_diff

    return flags_in_diff(patch, tuple(pythonpath), include=lambda path: not is_test_code(path))


def _test_env(request: GradeRequest, report: str, root: str) -> dict[str, str]:
    """Plugins load only when named (the agent's installed packages cannot hook into pytest).

    pytest reads the tree's clean configuration (``RUNNER_CONFIG_FILE``), never the agent's
    ``pyproject.toml`` or ``setup.cfg`` settings; the rootdir stays the tree's root.
    """
    options = ["-c", f"{root}/{RUNNER_CONFIG_FILE}", f"--rootdir={root}", "-p", "no:cacheprovider"]
    for plugin in request.pytest_plugins:
        options += ["-p", plugin]
    if uses_json_report(request.log_parser):
        options += ["-p", "pytest_jsonreport.plugin", "--json-report", f"--json-report-file={report}",
                    "--json-report-omit", "streams", "log", "keywords", "warnings", "traceback"]
    env = {
        "PYTEST_ADDOPTS": shlex.join(options),
        "PYTHONPATH": ":".join(request.pythonpath),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if not request.autoload_plugins:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def _read(sandbox: Sandbox, path: str) -> str:
    try:
        return sandbox.read_file(path).decode(errors="replace")
    except FileNotFoundError:
        return ""


def _require_canary(sandbox: Sandbox, tail: str) -> None:
    """No result at all: blame the code only if the environment can import pytest (with -I: the tree is ignored)."""
    canary = sandbox.exec(["python", "-I", "-c", "import pytest"], timeout=_CANARY_TIMEOUT_S)
    if not canary.ok:
        raise SandboxError(f"the test environment cannot import pytest ({_tail(canary, 5)}); rebuild it. "
                           f"The test command's output ends:\n{tail}")


def _tail(result: ExecResult, lines: int = TAIL_LINES) -> str:
    text = "\n".join(part for part in (result.stdout.rstrip(), result.stderr.rstrip()) if part)
    return "\n".join(text.splitlines()[-lines:])
