"""The test node: grade one codebase on a tree the harness builds, in the task's sandbox."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from prefect import task

from evoci.domain import TestReport, TestStatus
from evoci.grading import sabotage, tree
from evoci.grading.run import in_sandbox
from evoci.logs import run_logger
from evoci.runtime import Prepared, RunContext, inject_fault
from evoci.sandbox import open_sandbox
from evoci.grading.bytecode import BytecodeStore
from evoci.swe_ci.grade import run_pytest
from evoci.tasks.caching import test_key
from evoci.tasks.retry import NODE_OPTIONS
from evoci.workspace import Workspace

ORACLE = "oracle"

_ran = {  # how a test run ended, in words
    TestStatus.OK: "tests ran",
    TestStatus.AGENT_ERROR: "the code kept the tests from running (scored, not retried)",
    TestStatus.TIMEOUT: "the test suite hit its timeout",
}


@task(
    name="test",
    task_run_name="test-{label}",
    cache_key_fn=test_key,
    **NODE_OPTIONS,
)
def test_task(prepared: Prepared, run: RunContext, label: str, sha: str) -> TestReport:
    """Run the oracle's tests on workspace commit ``sha`` (``label`` = iteration number, or ``oracle``).

    The tests run on a grading tree: the commit's source with the oracle's test infrastructure
    restored (``evoci.grading.tree``), copied into the sandbox so nothing the code writes lasts.
    An agent's code that keeps the tests from running is a recorded outcome; a sandbox that
    fails raises, so Prefect retries this node.
    """
    inject_fault(run.home, "test", label)
    task_spec = prepared.task
    reference = Path(prepared.oracle_dir)
    overrides: list[str] = []
    # The sabotage scan only reads the workspace's history (a git diff): it runs beside the
    # tree's build and the test run instead of before them.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sabotage-scan") as beside:
        scan = None
        if label == ORACLE:
            root = reference
        else:
            workspace = Workspace(Path(prepared.workspace))
            scan = beside.submit(sabotage.flags, workspace, prepared.start_sha, sha, task_spec.tests_dir,
                                 task_spec.pythonpath)
            root = run.paths.task_dir(run.run_id, task_spec.task_id) / "grading" / label
            overrides = _agents_overrides(workspace, prepared, sha, tree.build(workspace, sha, reference,
                                                                                task_spec.tests_dir, root,
                                                                                tuple(task_spec.pythonpath)))
        # the oracle's own folder is graded in place and kept; an iteration's tree is removed after
        with in_sandbox(root, lambda tree_root: open_sandbox(run.config.sandbox, tree_root, prepared.environment,
                                                             run.paths, ephemeral=True),
                        clear=root != reference) as sandbox:
            report = run_pytest(
                sandbox, task_spec,
                timeout=task_spec.test_timeout_s or run.config.test_timeout_s,
                output_limit=run.config.output_limit_bytes,
                runner_config=tree.runner_config(reference),
                # Never into the oracle's own folder: it is the reference later trees are compared with.
                bytecode=BytecodeStore(run.paths.bytecode) if root != reference else None,
            )
        flags = scan.result() if scan else []
    passed = len(report.passed())
    run_logger().info(
        "task %s, %s: %s — %d of %d reported tests passed in %.1f s%s",
        task_spec.task_id, "the oracle" if label == ORACLE else f"iteration {label}", _ran[report.status],
        passed, len(report.outcomes), report.duration_s,
        f"; {len(overrides)} file(s) of the agent's were overridden for grading" if overrides else "",
    )
    return report.model_copy(update={"graded_overrides": overrides, "integrity_flags": [*flags, *report.integrity_flags]})


def _agents_overrides(workspace: Workspace, prepared: Prepared, sha: str, differences: list[str]) -> list[str]:
    """The differences the agent made: paths whose content in ``sha`` is not what iteration 0 had.

    A difference the base already had (its own conftest.py beside the oracle's) is the task's,
    not the agent's, and would otherwise mark every honest iteration.
    """
    if not differences or sha == prepared.start_sha:
        return []
    # -z: names as they are (git quotes a name with a byte that is not ASCII, which would match no difference)
    changed = set(workspace.git.diff("--name-only", "-z", "--no-ext-diff", "--no-renames", prepared.start_sha,
                                     sha).split("\0")) - {""}
    return [p for p in differences if p in changed or any(c.startswith(p.rstrip("/") + "/") for c in changed)]


# pytest must not collect this module's task as a test.
test_task.__test__ = False
