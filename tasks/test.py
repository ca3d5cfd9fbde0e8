"""The test node: run the oracle's tests on one codebase, in the task's sandbox."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from evoci.logs import run_logger

from evoci.domain import TestReport, TestStatus
from evoci.pytest_run import run_pytest
from evoci.runtime import Prepared, RunContext, inject_fault
from evoci.sandbox import open_sandbox
from evoci.workspace import Workspace
from evoci.tasks.caching import test_key
from evoci.tasks.retry import NODE_OPTIONS

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
    """Run the tests on workspace commit ``sha`` (``label`` = iteration number, or ``oracle``).

    An agent's code that keeps the tests from running is a recorded outcome; a sandbox
    that fails raises, so Prefect retries this node.
    """
    inject_fault(run.home, "test", label)
    task_spec = prepared.task
    if label == ORACLE:
        root = Path(prepared.oracle_dir)
    else:
        workspace = Workspace(Path(prepared.workspace))
        workspace.checkout(sha)
        workspace.restore(prepared.start_sha, task_spec.tests_dir)  # the oracle's tests, always
        root = workspace.path
    sandbox = open_sandbox(run.config.sandbox, root, prepared.environment, run.paths)
    try:
        report = run_pytest(
            sandbox, task_spec,
            timeout=task_spec.test_timeout_s or run.config.test_timeout_s,
            output_limit=run.config.output_limit_bytes,
        )
    finally:
        sandbox.cleanup()
    passed = len(report.passed())
    run_logger().info(
        "task %s, %s: %s — %d of %d reported tests passed in %.1f s",
        task_spec.task_id, "the oracle" if label == ORACLE else f"iteration {label}", _ran[report.status],
        passed, len(report.outcomes), report.duration_s,
    )
    return report


# pytest must not collect this module's task as a test.
test_task.__test__ = False
