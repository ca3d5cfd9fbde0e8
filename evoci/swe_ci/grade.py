"""SWE-CI's grader: a task's pytest suite on the grading tree, through the one grading path.

The tree is ``evoci.grading.tree``'s (the commit's source with the oracle's test infrastructure
restored); pytest runs through ``evoci.grading.run.run_launched`` (the launcher, the private
channel and its tally, the canary rule). What is SWE-CI's own, here: the task's pytest arguments,
the reference's runner configuration passed explicitly (``-c .evoci/pytest.ini --rootdir <tree>
--confcutdir <tree>``, so neither a configuration file the agent wrote nor one above the tree is
read), and the outcome as a ``TestReport``:

==============================================  =========================================
the run ended with                              ``TestReport.status``
==============================================  =========================================
the test timeout (the harness's own kill)       ``TIMEOUT``, no outcomes
a void channel                                  ``AGENT_ERROR``, no outcomes, flagged
a report, exit 0 or 1                           ``OK`` (report and tally disagree: the
                                                lower is graded, flagged)
a report, any other exit (collection errors,    ``AGENT_ERROR``, scored from the report
internal error, usage error, no tests)
no report, the canary passes                    ``AGENT_ERROR``, no outcomes
no report, the canary fails; a lost exit        raise (``SandboxError``, ``HarnessTimeout``)
==============================================  =========================================

A pytest usage error (exit 4) is the agent's too: the configuration is the reference's and was
proven on the reference's own run; on that run itself, ``evoci.sandbox.repair`` reads the error
(a ``--cov`` with no ``pytest-cov``) before the task is judged.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from evoci.domain import TaskSpec, TestReport, TestStatus
from evoci.errors import TaskSpecError
from evoci.grading.bytecode import BytecodeStore
from evoci.grading.run import run_launched
from evoci.sandbox.base import Sandbox

CONFIG_FILE = ".evoci/pytest.ini"  # the reference's runner configuration, in the graded tree
_STATUS = {"ok": TestStatus.OK, "timeout": TestStatus.TIMEOUT, "agent_error": TestStatus.AGENT_ERROR}


def run_pytest(sandbox: Sandbox, task: TaskSpec, *, timeout: float, output_limit: int,
               runner_config: str = "[pytest]\n", bytecode: BytecodeStore | None = None) -> TestReport:
    """Run ``task``'s tests in ``sandbox`` under ``runner_config``; raise only for infrastructure.

    ``bytecode``: where the test modules' rewritten bytecode is kept between runs (``evoci.grading.bytecode``).
    """
    sandbox.write_file(CONFIG_FILE, runner_config)
    root = sandbox.visible_root
    options = ["-c", f"{root}/{CONFIG_FILE}", f"--rootdir={root}", f"--confcutdir={root}", "-p", "no:cacheprovider", "-q"]
    ran = run_launched(sandbox, options=options, args=_task_args(task), pythonpath=task.pythonpath, timeout=timeout,
                       output_limit=output_limit, graded_exits=frozenset({0, 1}), python=_python(task),
                       bytecode=bytecode, runner_config=runner_config, test_folders=(task.tests_dir,))
    tail = f"{ran.output_tail}\n[evoci: {ran.unread}]".strip() if ran.unread else ran.output_tail
    return TestReport(status=_STATUS[ran.status], outcomes=ran.outcomes, details=ran.details,
                      collection_errors=ran.collection_errors, integrity_flags=ran.flags, exit_code=ran.exit_code,
                      duration_s=ran.duration_s, output_tail=tail)


def _task_args(task: TaskSpec) -> list[str]:
    """pytest's arguments: the task's own, after ``python -m pytest`` or ``pytest`` (evoci adds its own)."""
    cmd = list(task.test_command)
    if len(cmd) >= 3 and PurePosixPath(cmd[0]).name.startswith("python") and cmd[1:3] == ["-m", "pytest"]:
        return cmd[3:]
    if cmd and PurePosixPath(cmd[0]).name in ("pytest", "py.test"):
        return cmd[1:]
    raise TaskSpecError(
        f"test_command {cmd} does not run pytest: write it as ['python', '-m', 'pytest', <args>…] "
        "or ['pytest', <args>…] (evoci adds its own options)"
    )


def _python(task: TaskSpec) -> str:
    first = task.test_command[0] if task.test_command else "python"
    return first if PurePosixPath(first).name.startswith("python") else "python"
