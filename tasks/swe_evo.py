"""The SWE-EVO nodes: prepare an instance, let the agent produce a patch, grade it; optionally judge a failure.

Agents never see ``EvoInstance.answers``: the agent node hands a workspace agent only the
base checkout and ``instance.task()`` (release notes and PR context); the baselines that
read the answers run here, harness-side, without a workspace.
"""

from __future__ import annotations

import uuid

import git
from prefect import task
from prefect.context import TaskRunContext
from pydantic import BaseModel

from evoci import treefs
from evoci.agents.base import AgentOutcome
from evoci.domain import DEPENDENCY_FILES, AgentConfig, EnvironmentSpec
from evoci.logs import run_logger
from evoci.runtime import RunContext, inject_fault
from evoci.sandbox import open_sandbox
from evoci.sandbox.environment import resolve_environment
from evoci.swe_evo.agents import BASELINES, Prediction, baseline_patch, workspace_patch
from evoci.swe_evo.judge import Judgement
from evoci.swe_evo.judge import judge as judge_failure
from evoci.swe_evo.loader import EvoInstance
from evoci.swe_evo.predictions import load_predictions
from evoci.swe_evo.repos import open_repository
from evoci.errors import EnvironmentInvalid
from evoci.swebench.command import official_command
from evoci.swebench.grade import Grade, GradeRequest, grade, grading_sandbox
from evoci.swebench.validate import Validation, deleted_by_test_patch, judge_base, judge_with_reference, test_file
from evoci.tasks.caching import evo_agent_key, evo_grade_key, evo_judge_key, evo_prepare_key, evo_validate_key
from evoci.tasks.retry import NODE_OPTIONS
from evoci.workspace import Workspace, resolve


class EvoPrepared(BaseModel):
    """An instance made ready: its repository on disk, its base resolved, its environment known."""

    instance: EvoInstance
    repo: str
    base_sha: str
    environment: EnvironmentSpec


@task(name="prepare", task_run_name="prepare", cache_key_fn=evo_prepare_key, **NODE_OPTIONS)
def evo_prepare_task(instance: EvoInstance, run: RunContext) -> EvoPrepared:
    """Open the repository (TaskSpecError if the base is missing), resolve the environment at the end version."""
    repo_path = open_repository(instance.repo_path, run.paths.home / "repos")
    source = git.Repo(repo_path)
    base_sha = resolve(source, instance.base_commit, "base")
    end_sha = resolve(source, instance.end_ref, "end version")
    if instance.spec is not None:  # a known spec (shipped, or from the --environments side file)
        spec = instance.spec.environment()
        where = f"spec {instance.repo} {instance.spec_key}"
    else:  # none known: the end version's dependency files and the record's own extras
        tree = source.commit(end_sha).tree
        files = {name: tree[name].data_stream.read().decode(errors="replace") for name in DEPENDENCY_FILES if _has(tree, name)}
        spec = resolve_environment(files, python=instance.python)
        where = "dependency files"
    environment = spec.with_requirements(instance.requirements)
    run_logger().info("instance %s: base %s, test environment %s from %s (%d requirement(s), Python %s)",
                      instance.instance_id, base_sha[:10], environment.content_hash, where,
                      len(environment.requirements), environment.python or "of evoci")
    return EvoPrepared(instance=instance, repo=str(repo_path), base_sha=base_sha, environment=environment)


@task(name="agent", task_run_name="agent", cache_key_fn=evo_agent_key, **NODE_OPTIONS)
def evo_agent_task(prepared: EvoPrepared, run: RunContext) -> Prediction:
    """The prediction of ``run.config.programmer``: a baseline, a workspace agent, or a predictions file."""
    inject_fault(run.home, "agent", 1)
    config, instance = run.config.programmer, prepared.instance
    if config.kind == "predictions":
        patches = load_predictions(config.options["path"])
        patch = patches.get(instance.instance_id)
        prediction = Prediction(patch)
        prediction.outcome.message = "no prediction in the file" if patch is None else "read from the predictions file"
    elif config.kind in BASELINES:
        prediction = baseline_patch(config.kind, instance, git.Repo(prepared.repo))
    else:
        path = run.paths.workspace(run.run_id, instance.instance_id)
        workspace, start = Workspace.fresh(path, git.Repo(prepared.repo), prepared.base_sha)  # every attempt: the clean base
        sandbox = open_sandbox(run.config.sandbox, workspace.path, prepared.environment, run.paths)
        node_run = uuid.uuid4().hex  # the calls' key: Prefect's try count restarts at 1 in a new flow run
        try:
            prediction = workspace_patch(config, instance, workspace, start, sandbox)
            inject_fault(run.home, "programmer-paid", 1)  # a node that fails after its agent ran and committed
        except Exception as exc:  # infrastructure: keep the calls already paid for, then let Prefect retry
            partial = getattr(exc, "outcome", None)
            if isinstance(partial, AgentOutcome) and partial.calls:
                partial.node_try, partial.node_run = _node_try(), node_run
                run.facts.interrupted_calls(run.run_id, instance.instance_id, 1, "programmer", partial)
            raise
        finally:
            sandbox.cleanup()
        prediction.outcome.node_try, prediction.outcome.node_run = _node_try(), node_run
    lines = len(prediction.patch.splitlines()) if prediction.patch else 0
    run_logger().info("instance %s: the %s agent %s", instance.instance_id, config.kind,
                      f"made a {lines}-line patch" if lines else "made no change (no prediction)")
    return prediction


@task(name="validate", task_run_name="validate", cache_key_fn=evo_validate_key, **NODE_OPTIONS)
def evo_validate_task(prepared: EvoPrepared, run: RunContext) -> Validation:
    """Prove the environment on the clean base + test_patch (``evoci.swebench.validate``); EnvironmentInvalid if not."""
    instance = prepared.instance
    request = grade_request(instance, prepared, None, run.config.test_timeout_s)
    files = sorted({test_file(t) for t in request.targets} - set(request.targets))  # where collection errors show
    request = request.model_copy(update={"base_only": True, "targets": [*request.targets, *files]})
    tree = run.paths.task_dir(run.run_id, instance.instance_id) / "validation"
    result = grade(request, git.Repo(prepared.repo), tree, grading_sandbox(
        run.config.sandbox, prepared.environment, run.paths, silent_network=request.silent_network))
    verdict = judge_base(result, instance.p2p, prepared.environment.content_hash)
    if not verdict.ok and verdict.failing and instance.answers.patch:
        # Failing P2P tests whose test_patch version needs the release: the reference patch tells (validate.py).
        reference = grade_request(instance, prepared, instance.answers.patch, run.config.test_timeout_s)
        reference = reference.model_copy(update={"targets": [*verdict.failing,
                                                             *sorted({test_file(t) for t in verdict.failing})]})
        tree = run.paths.task_dir(run.run_id, instance.instance_id) / "validation-reference"
        try:
            ran = grade(reference, git.Repo(prepared.repo), tree, grading_sandbox(
                run.config.sandbox, prepared.environment, run.paths, silent_network=reference.silent_network))
            verdict = judge_with_reference(verdict, ran, deleted_by_test_patch(ran, tree, verdict.failing))
        finally:  # the release's code is the answer: it does not stay on disk while an agent works
            treefs.remove(tree.parent, tree.name)
    if not verdict.ok:
        spec = f"the spec {instance.repo} {instance.spec_key}" if instance.spec else "an environment spec (--environments FILE)"
        raise EnvironmentInvalid(f"the test environment is not proven on the clean base: {verdict.reason}\n"
                                 f"Fix {spec} and run again; no agent was graded on this instance.")
    run_logger().info("instance %s: environment proven on the base — %d of %d PASS_TO_PASS pass, %d not collected "
                      "there (%.1f s)%s", instance.instance_id, verdict.p2p_passing, verdict.p2p_total, verdict.p2p_absent,
                      verdict.duration_s,
                      f"; {len(verdict.p2p_release_only)} of them only with the reference patch (their test_patch "
                      "version needs the release)" if verdict.p2p_release_only else "")
    if verdict.p2p_not_in_test_patch:
        run_logger().warning("instance %s: the record lists %d PASS_TO_PASS test(s) its own test_patch deletes (%s): "
                             "they fail for every prediction, gold included, as in the official harness",
                             instance.instance_id, len(verdict.p2p_not_in_test_patch),
                             ", ".join(verdict.p2p_not_in_test_patch[:5]))
    return verdict


def grade_request(instance: EvoInstance, prepared: EvoPrepared, patch: str | None, timeout_s: float) -> GradeRequest:
    """What grading ``patch`` needs: the official command (directives appended) and every plugin it names."""
    test_patch = instance.answers.test_patch
    command = official_command(instance.test_cmds, test_patch)
    spec_plugins = instance.spec.pytest_plugins if instance.spec else ()
    plugins = list(dict.fromkeys([*spec_plugins, *instance.pytest_plugins, *command.plugins]))
    pythonpath = list(instance.spec.pythonpath) if instance.spec else ["src", "."]
    return GradeRequest(
        base_sha=prepared.base_sha, patch=patch, test_patch=test_patch, test_cmds=command.text,
        log_parser=instance.log_parser, targets=[*instance.f2p, *instance.p2p], pytest_plugins=plugins,
        autoload_plugins=instance.pytest_autoload, pythonpath=pythonpath, timeout_s=timeout_s,
        git_checkout=bool(instance.spec and instance.spec.git_checkout),
        silent_network=bool(instance.spec and instance.spec.silent_network),
    )


@task(name="test", task_run_name="test", cache_key_fn=evo_grade_key, **NODE_OPTIONS)
def evo_grade_task(prepared: EvoPrepared, run: RunContext, patch: str | None) -> Grade:
    """Grade ``patch`` on the clean base with the record's tests (``evoci.swebench.grade``)."""
    inject_fault(run.home, "test", 1)
    instance = prepared.instance
    request = grade_request(instance, prepared, patch, run.config.test_timeout_s)
    tree = run.paths.task_dir(run.run_id, instance.instance_id) / "grading"
    result = grade(request, git.Repo(prepared.repo), tree, grading_sandbox(
        run.config.sandbox, prepared.environment, run.paths, silent_network=request.silent_network))
    passed = sum(1 for o in result.outcomes.values() if o == "passed")
    run_logger().info("instance %s: graded %s — %d of %d target tests passed in %.1f s%s", instance.instance_id,
                      result.status, passed, len(result.outcomes), result.duration_s,
                      f"; grading overrode {len(result.overridden)} file(s) of the patch" if result.overridden else "")
    return result


def node_options(run: RunContext) -> dict:
    """Persist node results under this run's home (so retries find them), with the run's retry policy."""
    storage = run.paths.results
    storage.mkdir(parents=True, exist_ok=True)
    return dict(result_storage=storage, retries=run.config.node_retries, retry_delay_seconds=run.config.retry_delays_s)


def _node_try() -> int:
    """Which try of the current node this is (1 outside a Prefect task run)."""
    context = TaskRunContext.get()
    return context.task_run.run_count if context else 1


def _has(tree, name: str) -> bool:
    try:
        tree[name]
        return True
    except KeyError:
        return False


# pytest must not collect this module's tasks as tests.
evo_grade_task.__test__ = False


@task(name="judge", task_run_name="judge", cache_key_fn=evo_judge_key, **NODE_OPTIONS)
def evo_judge_task(run: RunContext, instance_id: str, judge: AgentConfig, text: str) -> Judgement:
    """Label one unresolved instance with the SWE-EVO failure taxonomy (``evoci.swe_evo.judge``)."""
    from evoci.agents.llm.client import make_chat_model
    from evoci.agents.llm.config import ModelConfig

    result = judge_failure(make_chat_model(ModelConfig.from_agent_config(judge)), text)
    run_logger().info("instance %s: the judge says %s", instance_id, result.label or f"nothing valid ({result.status})")
    return result
