"""Grade one prediction the SWE-bench way, shared by SWE-EVO and SWE-Bench-CL.

clean base → the agent's patch (applied or not, recorded; an empty patch is *no
prediction*, not "applied") → test files restored, ``test_patch`` applied, start-up hooks,
compiled files and runner look-alikes removed (``tree``) → the record's test command in the
sandbox → per-test outcomes in the record's id format (``parsers``), one per target test
(``missing`` when absent).

**The test command.** A record's command that is one plain pytest command (every public SWE-EVO
record's is) runs through evoci's launcher (``evoci.grading.launcher``: ``python -I``, the
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

Running and reading are the one grading path's (``evoci.grading.run``): a broken environment
(its canary cannot import pytest) raises ``SandboxError``, and a lost exit status
``HarnessTimeout``; a record whose ``test_patch`` does not apply raises ``InputError``. A test
process that died by a signal is the code's outcome when the canary passes (evoci's grading
integrity rule: only what the harness can prove is infrastructure, so code that kills its own
test run cannot turn its grade into a retry).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

import git
from pydantic import BaseModel, Field

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.errors import InputError
from evoci.grading.run import Ran, in_sandbox, run_launched, run_logged
from evoci.sandbox.base import TESTBED, Sandbox
from evoci.sandbox.budget import disk_usage, size_text
from evoci.settings import Paths
from evoci.swebench.parsers import STATUS, ParsedLog, Parser, get_parser, parse_json_report
from evoci.swebench.tree import RUNNER_CONFIG_FILE, is_test_code, make_base_tree, make_grading_tree

OUTPUT_LIMIT = 32_000_000  # -rA summaries of big suites run to megabytes; the summary is at the end
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
    git_checkout: bool = Field(False, description="The tree gets a .git holding one commit of the clean base (the spec's).")
    silent_network: bool = Field(False, description="Other hosts do not answer instead of being unreachable (the spec's).")


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
    """Grade ``request.patch`` in a fresh tree at ``tree_path``; ``open_tree`` opens a sandbox over it.

    The one grading path's four steps (``evoci.grading``): the SWE-bench tree (``tree``), the
    record's command run by ``run_launched`` or ``run_logged``, its outcomes read in the record's
    ids by the record's parser (``parsers``), the tree's overrides and every flag recorded.
    """
    parse = get_parser(request.log_parser)  # an unknown parser is bad input: fail before building anything
    if request.base_only:
        tree = make_base_tree(tree_path, source, request.base_sha, request.test_patch, request.git_checkout)
    else:
        tree = make_grading_tree(tree_path, source, request.base_sha, request.patch, request.test_patch,
                                 tuple(request.pythonpath), request.git_checkout)
    if tree.patch_applied is None:
        return Grade(status="no_prediction")
    if not tree.patch_applied:
        return Grade(status="not_applied", patch_applied=False, output_tail=tree.apply_error[-4000:])
    args = pytest_command_args(request.test_cmds)
    if args is None and parse is parse_json_report:
        raise InputError(f"log_parser {request.log_parser!r} reads pytest's JSON report, but test_cmds "
                         f"{request.test_cmds!r} is not one plain pytest command — write it as `pytest <args>`")
    flags = sabotage_flags(request.patch or "", request.pythonpath)
    with in_sandbox(tree.path, open_tree, clear=False) as sandbox:
        if (too_big := _past_capacity(tree.path, sandbox)) is not None:
            # The patch made the tree too big to copy into the test sandbox (a compressed binary patch
            # expands a thousandfold): the copy would fail, an infrastructure error the patch caused.
            return Grade(status="agent_error", patch_applied=True, apply_method=tree.apply_method,
                         overridden=tree.overridden, outcomes=dict.fromkeys(request.targets, "missing"),
                         integrity_flags=[*flags, too_big])
        if args is not None:
            ran, ids = _run_pytest(request, sandbox, args)
            parsed = _in_record_ids(ids, parse)
        else:
            kept: dict[str, ParsedLog] = {}

            def read(text: str) -> dict[str, str]:
                kept["parsed"] = parse(text)
                return kept["parsed"].outcomes

            ran = run_logged(sandbox, ["bash", "-c", request.test_cmds], env=_test_env(request, sandbox.visible_root),
                             timeout=request.timeout_s, output_limit=OUTPUT_LIMIT, parse=read,
                             graded_exits=frozenset({0, 1, 5}))
            parsed = kept.get("parsed")
    common = dict(patch_applied=True, apply_method=tree.apply_method, overridden=tree.overridden,
                  integrity_flags=[*flags, *ran.flags], exit_code=ran.exit_code, duration_s=ran.duration_s,
                  output_tail=ran.output_tail)
    if ran.status == "timeout":
        return Grade(status="timeout", **common)
    if parsed is None:  # nothing could be trusted: every target is missing
        return Grade(status="agent_error", outcomes=dict.fromkeys(request.targets, "missing"), **common)
    return Grade(status=ran.status, outcomes={t: parsed.outcomes.get(t, "missing") for t in request.targets},
                 collisions=dict(parsed.collisions), **common)


def grading_sandbox(config: SandboxConfig, environment: EnvironmentSpec, paths: Paths, *,
                    silent_network: bool = False) -> Callable[[Path], Sandbox]:
    """``grade``'s ``open_tree``: a private, size-capped copy of the tree at ``LAYOUT.root``, run as ``LAYOUT`` says.

    Ephemeral, so nothing the tests write reaches the host (and a container's root never leaves
    root-owned files in the harness's folders). ``silent_network``: the spec's (``Layout``).
    """
    from evoci.sandbox import open_sandbox  # the sandboxes import the environments, not the grader

    layout = replace(LAYOUT, silent_network=silent_network)
    return lambda root: open_sandbox(config, root, environment, paths, ephemeral=True, layout=layout)


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


def _past_capacity(root: Path, sandbox: Sandbox) -> str | None:
    """Why the tree at ``root`` is too big for ``sandbox``'s test run, or None."""
    capacity = getattr(sandbox, "tree_capacity", None)  # a sandbox of another kind may not say
    if capacity is None or disk_usage(root, stop_above=capacity) <= capacity:
        return None
    return (f"the patched tree is larger than a test run holds ({size_text(capacity)}, three quarters of "
            "tree_bytes): nothing was run (scored as nothing passing)")


def _run_pytest(request: GradeRequest, sandbox: Sandbox, args: list[str]) -> tuple[Ran, dict[str, str] | None]:
    """Run the record's pytest through evoci's launcher: what it read, and its outcomes by node id (None: unread).

    No ``-p`` for request.pytest_plugins here: the launcher loads every plugin the environment
    installs by its entry point (``-p xdist``), and naming a module again (``-p xdist.plugin``)
    makes pytest refuse the same plugin under a second name.
    """
    root = sandbox.visible_root
    # pytest exits 2 when a file fails to collect (a test_patch that imports what the release adds,
    # unwritten): the report is the launcher's and trusted, so that is an ordinary graded outcome.
    ran = run_launched(sandbox, options=["-c", f"{root}/{RUNNER_CONFIG_FILE}", f"--rootdir={root}", "-p",
                                         "no:cacheprovider"], args=args, pythonpath=request.pythonpath,
                       timeout=request.timeout_s, output_limit=OUTPUT_LIMIT, graded_exits=frozenset({0, 1, 2, 5}))
    if ran.status == "timeout":
        return ran, None
    if ran.unread:
        if not ran.flags:  # no report: what the test process printed is not graded
            ran.flags = [f"{ran.unread}: what it printed is not graded (scored as nothing passing)"]
        return ran, None
    outcomes = dict(ran.outcomes)
    for nodeid in ran.collection_errors:
        if nodeid:  # pytest -rA prints "ERROR <file>" for a file that failed to collect: the record's parser reads it so
            outcomes.setdefault(nodeid, "error")
    return ran, outcomes


def _in_record_ids(outcomes: dict[str, str] | None, parse: Parser) -> ParsedLog | None:
    """Node ids as the record names them: written as the ``-rA`` lines pytest prints, read by the record's parser.

    So ids are truncated (and collide) exactly as the record's are.
    """
    if outcomes is None:
        return None
    if parse is parse_json_report:
        return parse_json_report(json.dumps({"tests": [{"nodeid": t, "outcome": o} for t, o in outcomes.items()]}))
    words = {outcome: word for word, outcome in STATUS.items()}
    return parse("\n".join(f"{words[o]} {t}" for t, o in outcomes.items() if o in words))


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
