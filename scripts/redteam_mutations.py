"""Prove that every grading-integrity fix is guarded: with the fix removed, its red-team test fails.

    .venv/bin/python scripts/redteam_mutations.py                 # every mutation (about half an hour)
    .venv/bin/python scripts/redteam_mutations.py --only forged_frame_accepted shadows_kept
    .venv/bin/python scripts/redteam_mutations.py --list

Each mutation names an attack class (as the red-team tables of docs/grading-integrity.md name
it), the file that holds the fix, the exact source text of the fix (``old``) and what it becomes
with the fix removed or disabled (``new``, as small as possible), and the red-team tests
(``tests/security/``, through the real flows) that must then fail. For each one the script
replaces ``old`` by ``new`` in place, runs those tests with pytest in a child process, and puts
the file's original bytes (and modification time) back in a ``finally``, also when it is stopped
with Ctrl-C or SIGTERM. A mutation is ``caught`` when every test it names fails (a failed test,
or an error in a fixture's teardown: the outside canary of ``tests/security/conftest.py`` checks
after the test), ``MISSED`` when any of them still passes, and ``error`` when the tests could not
run (a setup error, a collection error) or ``old`` no longer matches the file.

It edits the working tree, not a copy: evoci is installed editable (``scripts/venv.sh``), so the
child pytest imports the mutated file. It refuses to start (exit 2) when a file it would mutate
has uncommitted changes, and its child runs without writing bytecode, so no mutated ``.pyc`` can
outlive the mutation. It runs the local (bubblewrap) sandbox only: every test id is a ``[local]``
one or has no sandbox parameter, and ``-m "not docker"`` leaves out anything marked docker. Run
one at a time: the tests share one machine's cores and the red-team lab's home.

Prints a markdown table (mutation | class | file | tests | result | seconds); exits 1 if any
mutation was MISSED or did not run, 0 when every one was caught.

Fixes in layers. Some attacks are stopped by several independent fixes, each of which alone is
enough: removing one changes nothing a test (or a user) can see. Such a mutation removes every
layer at once (``also``: further edits of the same file; ``why`` names the layers). For
``runner_config_written_through_link`` this was checked by building the grading tree with each
layer alone: each kept the canary file intact and recorded the link; with none, the canary was
written. Not mutated here, and why:

- reading the answer, secrets, network egress, fork bomb, disk fill, huge output: contained by
  the sandbox as a whole (namespaces, mounts, limits), not by one line of evoci;
- ``python -I`` in the launch command and plugin autoloading off: layered with the grading tree,
  which removes start-up hooks, package metadata and runner look-alikes (``startup_hooks_kept``,
  ``conftest_kept`` and ``shadows_kept`` remove the tree's side);
- NITR's ``.evoci``: cleared after each step (``evoci/nitr/agents.py``) and removed again as a link
  leaving the tree (``tasks/nitr.py``), two layers in two files; the SWE-CI side of the class is
  ``harness_dir_not_reclaimed``. The SWE-CI grading tree's own removal of ``.evoci`` is never
  reached by an agent: the commit it is built from never holds ``.evoci``;
- the channel's other rules (a second frame, text after the frame, a checksum): ``forged_frame``
  kills the collector, so its one frame meets only the exit rule (``forged_frame_accepted``); the
  others have unit tests (``tests/test_channel.py``);
- a pure rename in a prediction's patch: the scan reads the new name from the ``diff --git``
  header and again from ``rename to``; ``scan_binary_files`` removes the header's;
- in SWE-EVO and SWE-Bench-CL, a plain pytest command goes through the launcher, which reads
  nothing the tests print (by construction); what it reads, the report of a test process that
  was killed, is ``killed_report_read``; a killed log-parsed run is ``killed_script_graded``;
- NITR's infrastructure detection (a module exiting 126/127 is blamed on the sandbox only when
  the harness's own lookup finds no such program) has unit tests (``tests/nitr/test_evaluator.py``),
  no red-team test through the flow.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REDTEAM = "tests/security/test_redteam.py::test_a_hostile_programmer_cannot_change_its_grade[local-{}]"
LINKS = "tests/security/test_link_attacks.py::"
SWE_EVO = "tests/security/test_swe_evo_attacks.py::"
NITR = "tests/security/test_nitr_attacks.py::"
BUDGET = "tests/sandbox/test_budget.py::"
UNTRUSTED_PATHS = "tests/security/test_untrusted_paths.py::"
BYTECODE = "tests/grading/test_bytecode.py::"
HOOKS = "tests/swe_ci/test_grade.py::test_a_hook_that_claims_another_modules_file_or_a_plugins_name_is_flagged[{}]"
LOCKED = "tests/security/test_locked_folders.py::test_a_programmer_locking_its_folders_is_scored_and_what_it_hid_is_found"
TIMEOUT_S = 3600  # one mutation's tests, all together


@dataclass(frozen=True)
class Mutation:
    """One fix removed: ``old`` → ``new`` in ``file`` (and the ``also`` pairs, for a fix in layers)."""

    name: str
    attack_class: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]  # pytest node ids; a bare name is an attack of the red-team table (its [local] test)
    also: tuple[tuple[str, str], ...] = ()
    why: str = ""

    @property
    def node_ids(self) -> list[str]:
        return [t if "::" in t else REDTEAM.format(t) for t in self.tests]


MUTATIONS = [
    Mutation(
        "runner_config_written_through_link", "harness-owned name made a link (SWE-EVO, SWE-Bench-CL)",
        "evoci/swebench/tree.py",
        "*treefs.write_file(path, RUNNER_CONFIG_FILE, clean),",
        "*((path / RUNNER_CONFIG_FILE).write_text(clean) and ()),",
        (LINKS + "test_swe_evo_predictions_with_links_where_the_grader_writes_are_graded_and_recorded[local]",
         LINKS + "test_a_swe_bench_cl_agent_linking_the_runner_configuration_out_is_graded_and_recorded[local]"),
        also=(("for name in (HARNESS_DIR, RUNNER_CONFIG_FILE):", "for name in (HARNESS_DIR,):"),
              ("if treefs.link_leaves(root, path) or any(", "if any(")),
        why="three layers, each enough alone: the harness's names removed first, links leaving the tree "
            "removed, the configuration written without following a link",
    ),
    Mutation(
        "harness_dir_not_reclaimed", "harness-owned name made a link / a special file", "evoci/workspace.py",
        'if found in (None, "folder"):', "if True:",
        ("harness_dir_link", "harness_dir_fifo"),
    ),
    Mutation(
        "report_wins_over_tally", "forging the report", "evoci/grading/channel.py",
        "graded[test] = min(pair, key=_LOWEST_FIRST.index)", "graded[test] = pair[0]",
        ("stdlib_report_rewrite",),
    ),
    Mutation(
        "forged_frame_accepted", "forging the report", "evoci/grading/channel.py",
        "if result.exit_code != 0:  # the collector exits 0", "if False:  # the collector exits 0",
        ("forged_frame", BYTECODE + "test_a_frame_the_tree_writes_before_killing_the_collector_is_void[137]",
         BYTECODE + "test_a_frame_the_tree_writes_before_killing_the_collector_is_void[-9]"),
    ),
    Mutation(
        "killed_report_read", "forging the report", "evoci/grading/channel.py",
        "if exit_code < 0:", "if False:",
        ("forged_report_then_kill",),
    ),
    Mutation(
        "killed_script_graded", "forging the report (log-parsed: PASSED lines, then a self-kill)",
        "evoci/grading/run.py",
        "if result.exit_code not in NORMAL_EXITS:", "if False:",
        (SWE_EVO + "test_a_prediction_that_prints_passed_lines_and_kills_its_tests_resolves_nothing_and_is_flagged"
         "[log-parsed]",),
    ),
    Mutation(
        "shadows_kept", "runner look-alikes on the import path", "evoci/grading/shadows.py",
        "if (_compiled(rel) or _runner_like(rel, import_roots)) and not _known(rel, reference):", "if False:",
        ("compiled_runner_shadow",
         SWE_EVO + "test_a_compiled_pytest_in_the_prediction_resolves_nothing_and_is_recorded"),
    ),
    Mutation(
        "scan_quoted_names", "paths the scan skipped", "evoci/grading/diffpaths.py",
        "name = unquote(name.strip())", "name = name.strip()",
        ("scan_blind_spots",),
    ),
    Mutation(
        "scan_binary_files", "paths the scan skipped", "evoci/grading/diffpaths.py",
        'current.old, current.new = _header(line[len("diff --git "):])', "current.old = current.new = None",
        ("scan_blind_spots",),
    ),
    Mutation(
        "scan_links", "paths the scan skipped", "evoci/grading/sabotage.py",
        "if entry.is_link:", "if False:",
        ("scan_blind_spots",),
    ),
    Mutation(
        "runtime_watch_off", "in-process sabotage", "evoci/grading/launcher.py",
        "changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])", "changed = []",
        ("in_process_patch",),
    ),
    Mutation(
        "code_swap_unseen", "in-process sabotage (a function's code swapped in place)", "evoci/grading/launcher.py",
        "            marks += [id(function.__code__), id(function.__defaults__), id(function.__kwdefaults__)]\n",
        "            pass\n",
        ("in_process_code_swap",),
    ),
    Mutation(
        "nitr_tree_not_restored", "rewriting the grade (NITR: tested code edits the evaluator and the sources)",
        "evoci/nitr/evaluator.py",
        "                restore_tree(root, pristine, places[\"build_dir\"])\n", "                pass\n",
        (NITR + "test_tested_code_rewriting_the_evaluator_and_the_frozen_file_it_edited_still_gets_its_s[local]",),
        also=(("findings = run_check(module, pristine or root, checked)", "findings = run_check(module, root, places)"),),
        why="two layers: the file checks read the pristine copy, and the tree is put back before each later command "
            "module; the attack rewrites both what a later module runs and what a file check reads",
    ),
    Mutation(
        "links_leaving_kept", "reaching the host (links leaving the tree)", "evoci/grading/tree.py",
        "changed |= set(treefs.remove_leaving_links(dest))", "pass",
        ("symlink_escape",),
    ),
    Mutation(
        "nested_git_kept", "reaching the host (git hooks, fsmonitor)", "evoci/workspace.py",
        'if rel.rpartition("/")[2] == ".git" or len(os.fsencode(rel)) > GIT_LONGEST_PATH or kind == "special":',
        'if len(os.fsencode(rel)) > GIT_LONGEST_PATH or kind == "special":',
        ("git_hooks_and_fsmonitor",),
    ),
    Mutation(
        "conftest_kept", "runner configuration and extension (conftest outside tests)", "evoci/grading/tree.py",
        'HOOK_FILES = frozenset({"sitecustomize.py", "usercustomize.py", "conftest.py"})',
        'HOOK_FILES = frozenset({"sitecustomize.py", "usercustomize.py"})',
        ("conftest_outside_tests",),
    ),
    Mutation(
        "runner_config_read_from_tree", "runner configuration and extension (addopts)", "evoci/swe_ci/grade.py",
        '"-c", f"{root}/{CONFIG_FILE}", ', "",
        ("runner_config_addopts",),
    ),
    Mutation(
        "startup_hooks_kept", "runner configuration and extension (start-up hooks)", "evoci/grading/tree.py",
        'if name in HOOK_FILES or name.endswith(HOOK_SUFFIXES) and kind != "folder":',
        'if name == "conftest.py":',
        ("startup_hooks",),
    ),
    Mutation(
        "canary_rule_off", "voiding the score", "evoci/grading/run.py",
        "        require_canary(sandbox, python, LAUNCHED_CANARY, common[\"output_tail\"])\n",
        '        raise SandboxError("pytest wrote no report")\n',
        ("void_by_self_kill", "void_by_exit_4"),
    ),
    Mutation(
        "deep_json_raises", "parsing what the agent wrote (JSON nested too deeply)", "evoci/untrusted.py",
        "    except RecursionError:\n", "    except ZeroDivisionError:\n",
        ("tests/security/test_untrusted_json.py::"
         "test_tool_arguments_nested_too_deeply_are_the_agents_outcome_and_the_task_is_scored",),
    ),
    Mutation(
        "long_json_number_raises", "parsing what the agent wrote (a number too long for int())",
        "evoci/untrusted.py",
        "    except ValueError as exc:  # a number", "    except ZeroDivisionError as exc:  # a number",
        (UNTRUSTED_PATHS + "test_llm_tool_arguments_no_system_takes_are_the_models_errors_and_the_task_is_scored",),
    ),
    Mutation(
        "tool_arguments_unchecked", "names and patterns no system takes (LLM tools)", "evoci/agents/llm/tools.py",
        "        problem = path_problem(path)\n", "        problem = None\n",
        (UNTRUSTED_PATHS + "test_llm_tool_arguments_no_system_takes_are_the_models_errors_and_the_task_is_scored",),
        also=(('if normal == "." or path.endswith("/"):', "if False:"),
              ('if normal == ".." or normal.startswith("../"):', "if False:"),
              ('if "\\0" in args["pattern"]:', "if False:"),
              ('if len(args["pattern"].encode()) > PATTERN_BYTES:', "if False:"),
              ("_TREE_ERRNOS = frozenset({errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP, errno.EISDIR})",
               "_TREE_ERRNOS = frozenset()")),
        why="one check per kind of argument (the path's text, a folder as the file, the pattern, the tree's "
            "shape); the test sends every kind",
    ),
    Mutation(
        "nitr_answer_names_unchecked", "names and text no tree can hold (NITR answers)", "evoci/nitr/agents.py",
        "        problem = path_problem(name)\n", "        problem = None\n",
        (UNTRUSTED_PATHS
         + "test_nitr_api_answers_with_files_no_tree_can_hold_are_invalid_output_and_every_probe_is_scored",),
        also=(('if name.endswith("/") or posixpath.normpath(name) == ".":', "if False:"),
              ('if not storable(item["content"]):', "if False:")),
        why="one check per kind (the name's text, a folder as the file, the content); the test sends every kind",
    ),
    Mutation(
        "unreadable_reply_raises", "replies the model API's SDK cannot read (Anthropic tool input nested too deeply)",
        "evoci/agents/llm/client.py",
        "    except (RecursionError, ValueError) as exc:", "    except ZeroDivisionError as exc:",
        (UNTRUSTED_PATHS + "test_an_anthropic_tool_input_too_deep_to_read_is_a_model_error_and_the_task_is_scored",),
    ),
    Mutation(
        "undecodable_names_stored_raw", "names that are not text", "evoci/store/facts.py",
        "        batch = [(sql, _recordable(params)) for sql, params in batch]\n", "",
        ("undecodable_names",),
    ),
    Mutation(
        "quoted_names_unrecorded", "names that are not text (git quotes them)", "tasks/test.py",
        '"--name-only", "-z", "--no-ext-diff", "--no-renames", prepared.start_sha,\n'
        '                                     sha).split("\\0"))',
        '"--name-only", "--no-ext-diff", "--no-renames", prepared.start_sha,\n'
        '                                     sha).splitlines())',
        ("undecodable_names",),
    ),
    Mutation(
        "recursive_walk", "folders deeper than the harness's recursion", "evoci/treefs.py",
        "def walk(root: Path) -> Iterator[tuple[str, str]]:\n",
        "def walk(root: Path) -> Iterator[tuple[str, str]]:\n"
        "    for path in sorted(root.rglob('*')):  # Python 3.11's: one call deeper per level\n"
        "        yield path.relative_to(root).as_posix(), _kind(path.lstat().st_mode)\n\n\n"
        "def _iterative_walk(root: Path) -> Iterator[tuple[str, str]]:\n",
        ("deep_folders",),
    ),
    Mutation(
        "recursive_removal", "folders deeper than the harness's recursion", "evoci/treefs.py",
        "        _remove_folder(fd, name)\n", "        __import__('shutil').rmtree(name, dir_fd=fd)\n",
        ("deep_folders",),
    ),
    Mutation(
        "too_long_for_git_kept", "folders deeper than the harness's recursion (too long for git)",
        "evoci/workspace.py",
        ' or len(os.fsencode(rel)) > GIT_LONGEST_PATH or kind == "special":', ' or kind == "special":',
        ("deep_folders",),
    ),
    Mutation(
        "locked_folders_denied", "folders the agent locked (chmod 000/555, a harness that is not root)",
        "evoci/treefs.py",
        "    try:\n        fd = os.open(name, _DIR, dir_fd=parent)\n    except PermissionError:\n",
        "    return os.open(name, _DIR, dir_fd=parent)\n    try:\n        fd = os.open(name, _DIR, dir_fd=parent)\n"
        "    except PermissionError:\n",
        (LOCKED,),
    ),
    Mutation(
        "unreadable_files_kept", "files the agent made unreadable (chmod 000, a harness that is not root)",
        "evoci/workspace.py",
        "                treefs.let_owner_read(self.path, rel)\n", "                pass\n",
        (LOCKED,),
    ),
    Mutation(
        "workspace_not_watched", "agent filling the host disk", "evoci/sandbox/local.py",
        "        self._last_watch = DiskWatch(self._workspace, self.growth, ceiling)\n        return self._last_watch\n",
        "        return None\n",
        ("agent_disk_fill",),
    ),
    Mutation(
        "deleted_open_uncounted", "agent filling the host disk (deleted files held open)", "evoci/sandbox/budget.py",
        "            usage += held_deleted(self._processes(), self._device)\n", "            pass\n",
        ("agent_disk_fill_deleted_open",),
    ),
    Mutation(
        "growth_past_a_test_run", "agent filling the host disk (under the budget in each command)",
        "evoci/sandbox/budget.py",
        "self.capped = ceiling is not None and usage < ceiling and ceiling - usage < allowance", "self.capped = False",
        (BUDGET + "test_command_after_command_under_the_budget_the_workspace_still_cannot_outgrow_a_test_run",),
        why="the ceiling's own test drives DiskWatch directly, command after command (tests/sandbox/test_budget.py)",
    ),
    Mutation(
        "capabilities_kept", "privileges in the sandbox (remounting read-only binds)", "evoci/sandbox/bwrap.py",
        '"--cap-drop", "ALL", "--die-with-parent", "--new-session"',
        '"--die-with-parent", "--new-session"',
        ("remount_read_only",),
    ),
    Mutation(
        "over_budget_work_kept", "agent filling the host disk", "evoci/agents/base.py",
        "    restore()\n    outcome.status, outcome.message = AgentStatus.LIMIT",
        "    outcome.status, outcome.message = AgentStatus.LIMIT",
        ("agent_disk_fill",),
    ),
    Mutation(
        "chosen_model_404_stops_the_run", "voiding the score (a model the agent names that does not exist)",
        "evoci/gateway/server.py",
        "if status in REJECTED_STATUSES and not (status == 404 and (self._chosen(model)\n",
        "if status in REJECTED_STATUSES and not (status == 404 and (False\n",
        ("tests/security/test_gateway_attacks.py::test_a_model_the_programmer_names_that_does_not_exist_is_its_own_"
         "failed_call_and_the_task_is_scored",),
    ),
    Mutation(
        "code_made_xfail_trusted", "forging the report (an XFailed raised by the code under test)",
        "evoci/grading/launcher.py",
        "            self.forged.add(item.nodeid)\n", "            pass\n",
        (SWE_EVO + "test_a_prediction_whose_code_makes_its_failures_expected_resolves_nothing_and_is_flagged",),
    ),
    Mutation(
        "patched_tree_past_capacity", "voiding the score (a prediction expanding past the test sandbox)",
        "evoci/swebench/grade.py",
        "if (too_big := _past_capacity(tree.path, sandbox)) is not None:", "if False:",
        (SWE_EVO + "test_a_prediction_that_expands_past_the_test_sandbox_is_scored_not_retried[local]",),
    ),
    Mutation(
        "dev_writable", "disk fill (/dev in the local sandbox)", "evoci/sandbox/bwrap.py",
        '             "--remount-ro", "/dev",\n', "",
        ("dev_fill",),
    ),
    Mutation(
        "locked_tree_lookup", "voiding the score (NITR: a locked tree and exit 127)", "evoci/nitr/evaluator.py",
        "output_limit=output_limit, missing=missing, reclaim=reclaim)", "output_limit=output_limit, missing=missing)",
        (NITR + "test_tested_code_that_locks_its_tree_and_exits_127_is_scored_not_an_evaluator_error[local]",),
    ),
    Mutation(
        "plugin_registry_unwatched", "in-process sabotage (a plugin registered by the code under test)",
        "evoci/grading/launcher.py",
        "    changed += foreign_hooks(tally.config, at_launch, declared)\n", "    pass\n",
        ("in_process_plugin",),
    ),
    Mutation(
        "provoked_404_stops_the_run", "voiding the score (a 404 the agent provokes for its own model)",
        "evoci/gateway/server.py",
        "                                                                      or self._model_found(model, protocol))):",
        "                                                                      or False)):",
        ("tests/security/test_gateway_attacks.py::test_a_404_the_agent_provokes_for_its_own_model_is_its_failed_call_"
         "and_a_missing_model_still_stops[model-exists]",),
    ),
    Mutation(
        "git_attributes_obeyed", "how the harness's git reads the tree (.gitattributes)", "evoci/workspace.py",
        "        self._neutral_attributes()\n        found = []\n", "        found = []\n",
        ("git_attributes",),
    ),
    Mutation(
        "bytecode_pipe_left_open", "poisoning kept bytecode (a record written by the code under test)",
        "evoci/grading/launcher.py",
        "os.close(code_w)  # before any code of the tree can run: nothing it does reaches the bytecode section\n",
        "pass\n",
        ("tests/grading/test_bytecode.py::test_code_of_the_tree_cannot_add_to_what_is_kept",),
    ),
    Mutation(
        "own_module_plugin_allowed", "in-process sabotage (the tested code's own module registered as a plugin)",
        "evoci/grading/launcher.py",
        "else name in declared and where in {", "else True or where in {",
        ("in_process_plugin_module",),
    ),
    Mutation(
        "importable_tree_rewritten_ahead", "poisoning kept bytecode (an environment that imports the tree at start-up)",
        "evoci/grading/launcher.py",
        'if listed != "-" and tree_importable():\n', 'if listed != "-" and False:\n',
        ("tests/grading/test_bytecode.py::"
         "test_an_environment_that_makes_the_tree_importable_at_start_up_gets_nothing_rewritten_ahead",),
    ),
    Mutation(
        "hook_file_name_trusted", "in-process sabotage (a hook compiled under an environment file's name)",
        "evoci/grading/launcher.py",
        'if home is not None and getattr(home, "__file__", None) == where and _abs(where)', "if _abs(where)",
        (HOOKS.format("spoofed_file"),),
    ),
    Mutation(
        "declared_name_taken", "in-process sabotage (the tree's module registered under a declared plugin name)",
        "evoci/grading/launcher.py",
        "else name in declared and where in {", "else name in declared or where in {",
        (HOOKS.format("taken_name"),),
    ),
    Mutation(
        "tally_impersonated", "in-process sabotage (a hook added in the tally plugin's name)",
        "evoci/grading/launcher.py",
        "if plugin is _tally and type(impl.function)", "if plugin is _tally or False and type(impl.function)",
        (HOOKS.format("as_the_tally"),),
    ),
    Mutation(
        "hooks_listed_at_the_end_only", "in-process sabotage (a plugin unregistered before pytest returns)",
        "evoci/grading/launcher.py",
        "    for hook_name, impl in present + list(_tally.seen.values()):", "    for hook_name, impl in present:",
        (HOOKS.format("gone_by_the_end"),),
    ),
]


class Stopped(Exception):
    """SIGTERM (or SIGHUP) arrived: unwind, so every ``finally`` restores what it changed."""


def _stop(signum, _frame):
    raise Stopped(signal.Signals(signum).name)


def uncommitted(files: list[str]) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--", *files], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    return [line[3:] for line in out.splitlines() if line.strip()]


def mutated(text: str, mutation: Mutation) -> str | None:
    """``text`` with every edit of ``mutation`` applied, or None if an ``old`` does not occur exactly once."""
    for old, new in ((mutation.old, mutation.new), *mutation.also):
        if text.count(old) != 1:
            return None
        text = text.replace(old, new)
    return text


def run(mutation: Mutation) -> tuple[str, float]:
    """Apply ``mutation``, run its tests, restore the file; (result, seconds)."""
    started = time.monotonic()
    if uncommitted([mutation.file]):
        print(f"redteam_mutations: {mutation.file} has uncommitted changes: commit or stash them first",
              file=sys.stderr)
        raise SystemExit(2)
    path = ROOT / mutation.file
    original = path.read_bytes()
    info = path.stat()
    text = mutated(original.decode(), mutation)
    if text is None:
        print(f"mutation {mutation.name} no longer matches {mutation.file}: update it", file=sys.stderr, flush=True)
        return "error: no longer matches", time.monotonic() - started
    try:
        path.write_text(text)
        result = _pytest(mutation)
    finally:  # no signal may cut the restore short
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
        path.write_bytes(original)
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return result, time.monotonic() - started


def _pytest(mutation: Mutation) -> str:
    with tempfile.TemporaryDirectory(prefix="evoci-mutation-") as folder:
        junit = Path(folder) / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not docker", "--tb=line",
               "--show-capture=no", f"--junitxml={junit}", *mutation.node_ids]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "DOCKER_HOST": "unix:///nonexistent"}
        print(f"\n== {mutation.name}: {mutation.file}\n$ {' '.join(cmd[1:])}", flush=True)
        child = subprocess.Popen(cmd, cwd=ROOT, env=env, start_new_session=True)
        try:
            code = child.wait(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if child.poll() is None:  # stopped or timed out: end the child and every process it started
                _end(child)
        if code is None:
            return f"error: timed out after {TIMEOUT_S} s"
        return _verdict(code, junit, len(mutation.tests))


def _end(child: subprocess.Popen) -> None:
    """End ``child`` and every process below it (a Prefect server starts a session of its own): SIGTERM, then
    SIGKILL to what is left after 30 seconds."""
    below = _descendants(child.pid)
    for sig, grace in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
        for pid in below:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (child.poll() is None or any(_alive(pid) for pid in below)):
            time.sleep(0.2)
        if child.poll() is not None and not any(_alive(pid) for pid in below):
            return
    child.wait()


def _descendants(root: int) -> list[int]:
    """The processes below ``root`` (read from /proc), deepest last."""
    parent = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (ValueError, OSError, IndexError):
            continue
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, ppid in parent.items() if ppid in frontier]
        found += children
        frontier = children
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for this purpose
        return (Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]) != "Z"
    except OSError:
        return False


def _verdict(code: int, junit: Path, expected: int) -> str:
    """caught / MISSED / error from pytest's exit code and its JUnit XML (every named test must fail)."""
    if code not in (0, 1) or not junit.exists():
        return f"error: pytest exited {code}"
    # A test that fails and then errors in teardown has two entries: one verdict per test.
    outcome: dict[tuple[str | None, str | None], str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        key = (case.get("classname"), case.get("name"))
        errors = [e.get("message", "") for e in case.iter("error")]
        if case.find("failure") is not None or any("teardown" in m for m in errors):
            outcome[key] = "failed"
        elif (errors or case.find("skipped") is not None) and outcome.get(key) != "failed":
            outcome[key] = "broken"
        else:
            outcome.setdefault(key, "passed")
    counts = {v: list(outcome.values()).count(v) for v in ("failed", "passed", "broken")}
    if len(outcome) != expected:
        return f"error: {len(outcome)} of {expected} test(s) ran"
    if counts["broken"]:
        return f"error: {counts['broken']} test(s) skipped or broken in setup"
    if counts["passed"]:
        return f"MISSED: {counts['passed']} of {expected} passed"
    return f"caught ({counts['failed']}/{expected} failed)"


def _short(test: str) -> str:
    """A test id short enough for a table cell (``redteam[local-forged_frame]``, ``swe_evo_attacks::a_compiled…``)."""
    module, _, name = test.partition("::")
    function, _, param = name.partition("[")
    words = function.removeprefix("test_").split("_")
    generic = REDTEAM.split("::")[1].split("[")[0]  # the red-team table's one test: its parameter says it all
    short = "" if function == generic else "::" + "_".join(words[:4]) + "…" * (len(words) > 4)
    return f"`{Path(module).stem.removeprefix('test_')}{short}{'[' + param if param else ''}`"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    args = parser.parse_args(argv)
    names = {m.name for m in MUTATIONS}
    unknown = sorted(set(args.only or ()) - names)
    if unknown:
        print(f"redteam_mutations: no mutation named {', '.join(unknown)} (--list names them)", file=sys.stderr)
        return 2
    chosen = [m for m in MUTATIONS if not args.only or m.name in args.only]
    if args.list:
        for m in chosen:
            print(f"{m.name}\t{m.attack_class}\t{m.file}")
        return 0
    dirty = uncommitted(sorted({m.file for m in chosen}))
    if dirty:
        print(f"redteam_mutations: uncommitted changes in {', '.join(dirty)}: commit or stash them first "
              "(each mutation edits its file in place and restores the committed bytes)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    rows, started = [], time.monotonic()
    try:
        for mutation in chosen:
            result, seconds = run(mutation)
            rows.append((mutation, result, seconds))
    except (KeyboardInterrupt, Stopped) as exc:
        print(f"redteam_mutations: stopped ({exc or 'Ctrl-C'}); every mutated file was restored", file=sys.stderr)
        return 130
    print("\n| mutation | class | file | tests | result | seconds |\n|---|---|---|---|---|---|")
    for m, result, seconds in rows:
        print(f"| `{m.name}` | {m.attack_class} | `{m.file}` | {', '.join(_short(t) for t in m.node_ids)} | "
              f"{result} | {seconds:.0f} |")
    bad = [m.name for m, result, _ in rows if not result.startswith("caught")]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} caught in {time.monotonic() - started:.0f} s"
          + (f"; not caught: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
