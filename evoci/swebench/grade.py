"""Grade one prediction the SWE-bench way, shared by SWE-EVO and SWE-Bench-CL.

clean base → the agent's patch (applied or not, recorded; an empty patch is *no
prediction*, not "applied") → test files restored, ``test_patch`` applied, start-up hooks,
compiled files and runner look-alikes removed (``tree``) → the record's test command in the
sandbox → per-test outcomes in the record's id format (``parsers``), one per target test
(``missing`` when absent).

**The test command.** A record's command that is one plain pytest command (every public SWE-EVO
record's is) runs through SWE-CI's launcher (``evoci.grading.launcher``: ``python -I``, the
environment's pytest imported before the tree, autoloading off, the report on a private channel
cross-checked by an independent tally). Its report's node ids are written as the ``-rA`` lines
pytest prints and read by the record's own parser, so the ids are the record's (truncated, and
colliding, as the record's are). Nothing the tests print is read. Any other command (django's or
sympy's runner) is run by ``bash`` and its output parsed; a command that ends by a signal or with
an exit code no runner ends with by itself is **not graded** from what it printed: its code
could have printed anything before it killed itself.

How a grading ends (``Grade.status``):

=====================================  =============================================
``no_prediction``                      empty or missing patch: nothing is tested
``not_applied``                        the patch does not apply to the clean base
``timeout``                            the test command hit its timeout
``agent_error``                        no test result could be trusted (no report, a void
                                       channel, a killed command) and the environment's
                                       canary passed: nothing passes, and it is flagged
``ok``                                 outcomes were read
=====================================  =============================================

A broken environment (the canary ``python -I -c "import pytest"`` fails) raises
``SandboxError``, and a lost exit status ``HarnessTimeout``; a record whose ``test_patch`` does
not apply raises ``InputError``. A test process that died by a signal is the code's outcome when
the canary passes (evoci's grading integrity rule: only what the harness can prove is
infrastructure, so code that kills its own test run cannot turn its grade into a retry).
"""

from __future__ import annotations

import json
import posixpath
import secrets
import shlex
from collections.abc import Callable
from pathlib import Path, PurePosixPath

import git
from pydantic import BaseModel, Field

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.errors import HarnessTimeout, InputError, SandboxError
from evoci.grading.channel import read_frame
from evoci.pytest_run import OMIT as _OMIT
from evoci.pytest_run import ending as _ending
from evoci.pytest_run import graded_outcomes, launch_command
from evoci.sandbox.base import TESTBED, ExecResult, Sandbox
from evoci.settings import Paths
from evoci.swebench.parsers import STATUS, Parser, get_parser, parse_json_report
from evoci.swebench.tree import RUNNER_CONFIG_FILE, is_test_code, make_base_tree, make_grading_tree

TAIL_LINES = 60
OUTPUT_LIMIT = 32_000_000  # -rA summaries of big suites run to megabytes; the summary is at the end
_CANARY_TIMEOUT_S = 120.0
# How a test runner ends by itself (pytest uses 0–5; django's and sympy's runners 0 and 1).
NORMAL_EXITS = frozenset(range(6))
# A command with any of these is a script, not one pytest command: it keeps the log-parsed path.
_SHELL = frozenset({"&&", "||", ";", "|", "&", ">", "<", ">>"})
# Where the record's tests run and as whom: the SWE-bench images' /testbed, as root. Records name
# tests by it (dvc's ``test_to_relpath[/testbed-/testbed]``, ``test_ssh_user[config3-root]``), so a
# test id graded elsewhere is another test. Part of the grading identity (the nodes' cache keys).
LAYOUT = TESTBED


class GradeRequest(BaseModel):
    """What grading one prediction needs (all of it harness-side)."""

    base_sha: str
    patch: str | None = Field(description="The agent's patch; None or blank = no prediction.")
    test_patch: str = ""
    test_cmds: str
    log_parser: str
    targets: list[str]
    pytest_plugins: list[str] = Field(default_factory=list, description=(
        "Loaded with -p when test_cmds is a script (autoloading stays off); through the launcher every "
        "installed plugin loads by its entry point."))
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
        tree = make_grading_tree(tree_path, source, request.base_sha, request.patch, request.test_patch,
                                 tuple(request.pythonpath))
    if tree.patch_applied is None:
        return Grade(status="no_prediction")
    if not tree.patch_applied:
        return Grade(status="not_applied", patch_applied=False, output_tail=tree.apply_error[-4000:])
    sandbox = open_tree(tree.path)
    try:
        common = dict(patch_applied=True, apply_method=tree.apply_method, overridden=tree.overridden,
                      integrity_flags=sabotage_flags(request.patch or "", request.pythonpath))
        args = pytest_command_args(request.test_cmds)
        if args is not None:
            return _grade_pytest(request, sandbox, args, parse, common)
        if parse is parse_json_report:
            raise InputError(f"log_parser {request.log_parser!r} reads pytest's JSON report, but test_cmds "
                             f"{request.test_cmds!r} is not one plain pytest command — write it as `pytest <args>`")
        result = sandbox.exec(["bash", "-c", request.test_cmds], env=_test_env(request, sandbox.visible_root),
                              timeout=request.timeout_s, output_limit=OUTPUT_LIMIT)
        common.update(exit_code=result.exit_code, duration_s=result.duration_s, output_tail=_tail(result))
        if result.timed_out:
            return Grade(status="timeout", **common)
        if result.exit_code is None:
            raise HarnessTimeout(f"the sandbox lost the test command's exit status; output ends:\n{_tail(result)}")
        if result.exit_code not in NORMAL_EXITS:
            # What a killed run printed is whatever its code chose to print: it is never graded.
            common["integrity_flags"] = [*common["integrity_flags"], f"the test command ended {_ending(result.exit_code)}: "
                                         "what it printed is not graded (scored as nothing passing)"]
            return Grade(status="agent_error", outcomes=dict.fromkeys(request.targets, "missing"), **common)
        parsed = parse(f"{result.stdout}\n{result.stderr}")
        if not parsed.outcomes:
            _require_canary(sandbox, _tail(result))
        status = "ok" if parsed.outcomes or result.exit_code in (0, 1, 5) else "agent_error"
        outcomes = {t: parsed.outcomes.get(t, "missing") for t in request.targets}
        return Grade(status=status, outcomes=outcomes, collisions=dict(parsed.collisions), **common)
    finally:
        sandbox.cleanup()


def grading_sandbox(config: SandboxConfig, environment: EnvironmentSpec, paths: Paths) -> Callable[[Path], Sandbox]:
    """``grade``'s ``open_tree``: a private, size-capped copy of the tree at ``LAYOUT.root``, run as ``LAYOUT`` says.

    Ephemeral, so nothing the tests write reaches the host (and a container's root never leaves
    root-owned files in the harness's folders).
    """
    from evoci.sandbox import open_sandbox  # the sandboxes import the environments, not the grader

    return lambda root: open_sandbox(config, root, environment, paths, ephemeral=True, layout=LAYOUT)


def pytest_command_args(test_cmds: str) -> list[str] | None:
    """pytest's arguments when ``test_cmds`` is one plain pytest command (``pytest …``, ``python -m pytest …``), else None."""
    try:
        words = shlex.split(test_cmds)
    except ValueError:
        return None
    if any(w in _SHELL for w in words):
        return None
    if words and PurePosixPath(words[0]).name in ("pytest", "py.test"):
        return words[1:]
    if len(words) >= 3 and PurePosixPath(words[0]).name.startswith("python") and words[1:3] == ["-m", "pytest"]:
        return words[3:]
    return None


def _grade_pytest(request: GradeRequest, sandbox: Sandbox, args: list[str], parse: Parser, common: dict) -> Grade:
    """Run the record's pytest through evoci's launcher; map its report to the record's ids with the record's parser.

    The report's node ids are written as the ``-rA`` lines pytest would print and read by the
    record's own parser, so ids are truncated (and collide) exactly as the record's are.
    """
    root = sandbox.visible_root
    report = f"{sandbox.report_dir}/evoci-report-{secrets.token_hex(8)}.json"
    paths = [posixpath.normpath(posixpath.join(root, p)) for p in request.pythonpath]
    # No ``-p`` for request.pytest_plugins here: the launcher loads every plugin the environment
    # installs by its entry point (``-p xdist``), and naming a module again (``-p xdist.plugin``)
    # makes pytest refuse the same plugin under a second name.
    options = ["-c", f"{root}/{RUNNER_CONFIG_FILE}", f"--rootdir={root}", "-p", "no:cacheprovider",
               "--json-report", f"--json-report-file={report}", "--json-report-omit", *_OMIT]
    result = sandbox.exec(launch_command("python", root, report, paths, [*options, *args]),
                          env={"PYTHONPATH": ":".join(paths)}, timeout=request.timeout_s, output_limit=OUTPUT_LIMIT)
    common.update(exit_code=result.exit_code, duration_s=result.duration_s, output_tail=_tail(result))
    if result.timed_out:
        return Grade(status="timeout", **common)
    if result.exit_code is None:
        raise HarnessTimeout(f"the sandbox lost the test command's exit status; output ends:\n{_tail(result)}")
    frame = read_frame(result)
    nothing = dict.fromkeys(request.targets, "missing")
    if frame.void:
        common["integrity_flags"] = [*common["integrity_flags"], f"the report is void: {frame.void}"]
        return Grade(status="agent_error", outcomes=nothing, **common)
    if frame.report is None:
        _require_canary(sandbox, _tail(result))
        ended = _ending(result.exit_code if frame.exit_code is None else frame.exit_code)
        common["integrity_flags"] = [*common["integrity_flags"], f"the test process ended {ended} without a report: "
                                     "what it printed is not graded (scored as nothing passing)"]
        return Grade(status="agent_error", outcomes=nothing, **common)
    outcomes, _, flags = graded_outcomes(frame)
    for collector in frame.report.get("collectors") or []:
        if collector.get("outcome") == "failed" and collector.get("nodeid"):
            # pytest -rA prints "ERROR <file>" for a file that failed to collect: the record's parser reads it so
            outcomes.setdefault(collector["nodeid"], "error")
    common["integrity_flags"] = [*common["integrity_flags"], *flags]
    words = {outcome: word for word, outcome in STATUS.items()}
    parsed = parse_json_report(json.dumps({"tests": [{"nodeid": t, "outcome": o} for t, o in outcomes.items()]})) \
        if parse is parse_json_report else parse("\n".join(f"{words[o]} {t}" for t, o in outcomes.items() if o in words))
    # pytest exits 2 when a file fails to collect (a test_patch that imports what the release adds,
    # unwritten): the report is the launcher's and trusted, so that is an ordinary graded outcome.
    status = "ok" if frame.exit_code in (0, 1, 2, 5) else "agent_error"
    return Grade(status=status, outcomes={t: parsed.outcomes.get(t, "missing") for t in request.targets},
                 collisions=dict(parsed.collisions), **common)


def sabotage_flags(patch: str, pythonpath: list[str]) -> list[str]:
    """The integrity flags (``evoci.grading.sabotage``) of every line the patch adds outside test code.

    In-process sabotage of the runner cannot be prevented, only flagged for a person to read;
    the rules are the SWE-CI test node's, applied to a patch instead of two commits.
    """
    from evoci.grading.sabotage import flags_in_diff

    return flags_in_diff(patch, tuple(pythonpath), include=lambda path: not is_test_code(path))


def _test_env(request: GradeRequest, root: str) -> dict[str, str]:
    """A runner that is not one plain pytest command: plugins load only when named.

    pytest (when the command runs it) reads the tree's clean configuration (``RUNNER_CONFIG_FILE``),
    never the agent's ``pyproject.toml`` or ``setup.cfg`` settings; the rootdir stays the tree's root.
    """
    options = ["-c", f"{root}/{RUNNER_CONFIG_FILE}", f"--rootdir={root}", "-p", "no:cacheprovider"]
    for plugin in request.pytest_plugins:
        options += ["-p", plugin]
    env = {
        "PYTEST_ADDOPTS": shlex.join(options),
        "PYTHONPATH": ":".join(request.pythonpath),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    if not request.autoload_plugins:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def _require_canary(sandbox: Sandbox, tail: str) -> None:
    """No result at all: blame the code only if the environment can import pytest (with -I: the tree is ignored)."""
    canary = sandbox.exec(["python", "-I", "-c", "import pytest"], timeout=_CANARY_TIMEOUT_S)
    if not canary.ok:
        raise SandboxError(f"the test environment cannot import pytest ({_tail(canary, 5)}); rebuild it. "
                           f"The test command's output ends:\n{tail}")


def _tail(result: ExecResult, lines: int = TAIL_LINES) -> str:
    text = "\n".join(part for part in (result.stdout.rstrip(), result.stderr.rstrip()) if part)
    return "\n".join(text.splitlines()[-lines:])
