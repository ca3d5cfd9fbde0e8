"""Cache keys of the node tasks: small identities, never paths or whole reports.

Every key starts with the run id and task id, so two runs never share results, and a
re-run of the same run (same command after a crash, or a Prefect flow-run retry) finds
the completed nodes' persisted results instead of recomputing them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from prefect.context import TaskRunContext

from evoci.grading import GRADER_VERSION
from evoci.swe_ci.quality import QUALITY_VERSION, tool_versions
from evoci.swebench.grade import LAYOUT as SWEBENCH_LAYOUT


def _key(*parts: Any) -> str:
    # Hashed: Prefect silently skips caching keys longer than 255 characters.
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()


def prepare_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, task spec (repo, refs, test settings) or sandbox
    config, and by deleting the task's run folder (its identity marker goes with it), so
    cached results never point at workspace commits that are gone.
    """
    run, task = args["run"], args["task"]
    identity = run.paths.task_identity(run.run_id, task.task_id)
    return _key("prepare", run.run_id, task.model_dump_json(), run.config.sandbox.model_dump_json(), identity)




def test_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, task, workspace, codebase commit, environment, test command,
    timeout, sandbox config or grading path (``GRADER_VERSION``). The codebase is always a commit
    (nodes commit before they hand over), so its SHA identifies the code exactly; the tests and
    runner configuration come from the oracle, which the task identifies.
    """
    run, prepared = args["run"], args["prepared"]
    task = prepared.task
    return _key(
        "test", GRADER_VERSION, run.run_id, task.task_id, prepared.workspace_id, args["label"], args["sha"], prepared.environment.content_hash,
        task.test_command, task.pythonpath, task.test_timeout_s or run.config.test_timeout_s,
        run.config.sandbox.model_dump_json(),
    )


def agent_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, task, workspace, iteration, input commit, or agent config
    (architect and programmer configs both count: the programmer reads the architect's work).
    """
    run, prepared = args["run"], args["prepared"]
    config = run.config
    return _key(
        context.task.name, run.run_id, prepared.task.task_id, prepared.workspace_id, args["iteration"], args["sha"],
        config.architect.model_dump_json(), config.programmer.model_dump_json(), config.max_iterations,
    )


def quality_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, task, workspace, iteration or commit, by what is
    measured (``QUALITY_VERSION``) and by the radon or pylint version.
    """
    run, prepared = args["run"], args["prepared"]
    return _key("quality", QUALITY_VERSION, tool_versions(), run.run_id, prepared.task.task_id, prepared.workspace_id,
                args["iteration"], args["sha"])


def evo_prepare_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run or record (its content hash), or a different sandbox config."""
    run, instance = args["run"], args["instance"]
    return _key("evo-prepare", run.run_id, instance.instance_id, instance.record_hash,
                instance.spec.content_hash if instance.spec else "", run.config.sandbox.model_dump_json())


def evo_validate_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Kept across runs of one home: the same record, environment spec, environment, timeout, sandbox and
    layout (where and as whom the tests run) were proven once. A failed validation raises, so nothing is kept and a re-run validates again."""
    run, prepared = args["run"], args["prepared"]
    instance = prepared.instance
    return _key("evo-validate", instance.instance_id, instance.record_hash, instance.spec.content_hash if instance.spec else "",
                prepared.environment.content_hash, run.config.test_timeout_s, run.config.sandbox.model_dump_json(),
                SWEBENCH_LAYOUT.identity, GRADER_VERSION)


def evo_agent_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, record, environment, or agent config (a predictions file is keyed by content)."""
    run, prepared = args["run"], args["prepared"]
    return _key("evo-agent", run.run_id, prepared.instance.instance_id, prepared.instance.record_hash,
                prepared.environment.content_hash, run.config.programmer.model_dump_json())


def evo_grade_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, record, patch (its hash), environment, timeout, sandbox config, layout or
    grading path (``GRADER_VERSION``)."""
    run, prepared, patch = args["run"], args["prepared"], args["patch"]
    digest = "none" if patch is None else hashlib.sha256(patch.encode()).hexdigest()
    spec = prepared.instance.spec.content_hash if prepared.instance.spec else ""
    return _key("evo-test", run.run_id, prepared.instance.instance_id, prepared.instance.record_hash, digest, spec,
                prepared.environment.content_hash, run.config.test_timeout_s, run.config.sandbox.model_dump_json(),
                SWEBENCH_LAYOUT.identity, GRADER_VERSION)


def evo_judge_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, instance, judge config, or evidence (its hash)."""
    digest = hashlib.sha256(args["text"].encode()).hexdigest()
    return _key("evo-judge", args["run"].run_id, args["instance_id"], args["judge"].model_dump_json(), digest)


def nitr_prepare_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, probe content (starter code, TASKs, spec, evaluator),
    attempt, or by deleting the probe's run folder (its identity marker goes with it).
    """
    run, probe = args["run"], args["probe"]
    identity = run.paths.task_identity(run.run_id, probe.probe_id)
    return _key("nitr-prepare", run.run_id, probe.probe_id, probe.content_hash, args["attempt"], identity)


def nitr_preflight_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, probe content or sandbox config; a failed preflight is never cached."""
    run, probe = args["run"], args["probe"]
    return _key("nitr-preflight", run.run_id, probe.probe_id, probe.content_hash, run.config.sandbox.model_dump_json())


def nitr_step_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, probe content, workspace, attempt, step, input commit or agent config."""
    run, prepared = args["run"], args["prepared"]
    return _key("nitr-step", run.run_id, prepared.probe.probe_id, prepared.probe.content_hash, prepared.workspace_id,
                prepared.attempt, args["step"], args["sha"], run.config.programmer.model_dump_json())


def nitr_grade_key(context: TaskRunContext, args: dict[str, Any]) -> str:
    """Invalidated by a different run, probe content (the evaluator is part of it), workspace,
    attempt, step, graded commit, timeout or sandbox config.
    """
    run, prepared = args["run"], args["prepared"]
    return _key("nitr-grade", run.run_id, prepared.probe.probe_id, prepared.probe.content_hash, prepared.workspace_id,
                prepared.attempt, args["step"], args["sha"], run.config.test_timeout_s, run.config.sandbox.model_dump_json())
