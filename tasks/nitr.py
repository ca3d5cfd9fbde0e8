"""The NITR node tasks: prepare a probe's workspace, run one step's agent, grade one commit.

The step node hands its agent only the step's TASK text and a sandbox over the workspace
(the probe's starter code as changed by earlier steps). The grade node builds a separate
grading tree (agent's code + starter code + evaluator), runs the evaluator there through
the sandbox, and deletes the tree.
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

from prefect import task
from prefect.context import TaskRunContext
from pydantic import BaseModel

from evoci import treefs
from evoci.agents.base import AgentOutcome, discard_over_budget
from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.grading.run import in_sandbox
from evoci.logs import run_logger
from evoci.nitr.agents import StepContext, clear_harness_dir, make_step_agent
from evoci.nitr.evaluator import NitrGrade, evaluate
from evoci.nitr import preflight
from evoci.nitr.loader import NitrProbe
from evoci.nitr.trees import build_grading_tree, create_workspace, shared_folders
from evoci.runtime import RunContext, inject_fault
from evoci.sandbox import open_sandbox
from evoci.tasks.caching import nitr_grade_key, nitr_preflight_key, nitr_prepare_key, nitr_step_key
from evoci.tasks.retry import NODE_OPTIONS
from evoci.workspace import Workspace

# The probes' own tests and checks need nothing beyond the interpreter and the build tools.
NITR_ENVIRONMENT = EnvironmentSpec()


class NitrPrepared(BaseModel):
    """One attempt at a probe, made ready: its workspace and the starter code's commit."""

    probe: NitrProbe
    attempt: int
    workspace: str
    workspace_id: str
    start_sha: str


class StepResult(BaseModel):
    """What a step left: its commit, what the agent did, and the files it changed."""

    sha: str
    outcome: AgentOutcome
    changed_files: list[str] = []
    tampered_files: list[str] = []  # what grading will never see: .evoci made a link, links out of the tree


def sandbox_config(run: RunContext, probe: NitrProbe) -> SandboxConfig:
    """The run's sandbox; in Docker, on evoci's C++ image for a probe graded with CMake (a C++ probe, or any
    probe of a checkout built as one CMake project: its Python tests run through ``ctest``), unless the
    options name an image."""
    config = run.config.sandbox
    cmake = probe.language == "cpp" or probe.one_project
    if not cmake or config.kind != "docker" or {"base_image", "image"} & set(config.options):
        return config
    from evoci.sandbox.docker.cpp_image import CPP_IMAGE, bootstrap_cpp_image

    bootstrap_cpp_image()  # built offline once, then found
    return config.model_copy(update={"options": {**config.options, "base_image": CPP_IMAGE}})


def grading_root(run: RunContext, probe_id: str) -> Path:
    """Outside the probe's run folder: nothing next to a workspace ever holds an evaluator.

    One fixed folder per probe and run (its attempts and steps are graded one after another):
    the build template CMake made there stays valid (see ``evoci.nitr.preflight``).
    """
    return run.paths.home / "grading" / run.run_id / probe_id


@task(name="nitr-preflight", task_run_name="preflight-{probe.probe_id}", cache_key_fn=nitr_preflight_key,
      **NODE_OPTIONS)
def nitr_preflight_task(probe: NitrProbe, run: RunContext) -> bool:
    """Prove the sandbox can configure and test the probe (pristine starter code) before any agent is graded."""
    folder = grading_root(run, probe.probe_id)
    root = preflight.pristine_tree(probe, folder / "tree", folder / "starter")
    sandbox = open_sandbox(sandbox_config(run, probe), root, NITR_ENVIRONMENT, run.paths, shared=shared_folders(probe))
    try:
        preflight.check(probe, sandbox, root)
        preflight.keep_template(probe, sandbox, root, folder / "build-template")
    finally:
        sandbox.cleanup()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(folder / "starter", ignore_errors=True)
    return True


@task(name="nitr-prepare", task_run_name="prepare-{probe.probe_id}-attempt-{attempt}", cache_key_fn=nitr_prepare_key,
      **NODE_OPTIONS)
def nitr_prepare_task(probe: NitrProbe, run: RunContext, attempt: int) -> NitrPrepared:
    """Create the attempt's workspace repository holding only the probe's starter code."""
    path = run.paths.task_dir(run.run_id, probe.probe_id) / f"attempt-{attempt}" / "workspace"
    _, sha = create_workspace(path, probe)
    return NitrPrepared(probe=probe, attempt=attempt, workspace=str(path), start_sha=sha,
                        workspace_id=run.paths.task_identity(run.run_id, probe.probe_id))


@task(name="nitr-step", task_run_name="step-{step}-attempt-{prepared.attempt}", cache_key_fn=nitr_step_key,
      **NODE_OPTIONS)
def nitr_step_task(prepared: NitrPrepared, run: RunContext, step: int, sha: str) -> StepResult:
    """Step ``step``: the agent sees TASK<step> and the code of commit ``sha``; its work is committed."""
    started = time.monotonic()
    inject_fault(run.home, "nitr-step", step)
    probe = prepared.probe
    workspace = Workspace(Path(prepared.workspace))
    workspace.checkout(sha)
    clear_harness_dir(workspace.path)
    agent = make_step_agent(run.config.programmer, probe)
    sandbox = open_sandbox(sandbox_config(run, probe), workspace.path, NITR_ENVIRONMENT, run.paths)
    task_run = TaskRunContext.get()
    node_try = task_run.task_run.run_count if task_run else 1
    node_run = uuid.uuid4().hex  # the calls' key: Prefect's try count restarts at 1 in a new flow run
    try:
        ctx = StepContext(probe_id=probe.probe_id, step=step, steps=probe.steps, task_text=probe.task_text(step),
                          sandbox=sandbox, visible_files=workspace.repo.git.ls_files().splitlines())
        outcome = agent.run(ctx)
    except Exception as exc:  # infrastructure cut the attempt short: keep the model calls already paid for
        partial = getattr(exc, "outcome", None)
        if isinstance(partial, AgentOutcome) and partial.calls:
            partial.node_try, partial.node_run = node_try, node_run
            run.facts.interrupted_calls(run.run_id, probe.probe_id, step, "programmer", partial)
        raise
    finally:
        sandbox.cleanup()
    discard_over_budget(outcome, sandbox, lambda: workspace.checkout(sha))
    outcome.node_try, outcome.node_run = node_try, node_run
    tampered = sorted({*clear_harness_dir(workspace.path), *treefs.remove_leaving_links(workspace.path)})
    workspace.purge_nested_git()  # before git looks: special files, locked folders (commit does it too)
    changed = workspace.changed_files()
    new_sha = workspace.commit(step, f"evoci: {probe.probe_id} step {step} ({outcome.status.value})\n\n{outcome.message}")
    run_logger().info("probe %s, attempt %d, step %d of %d: the agent ended %s — %d file(s) changed, in %.1f s",
                      probe.probe_id, prepared.attempt, step, probe.steps, outcome.status.value, len(changed),
                      time.monotonic() - started)
    return StepResult(sha=new_sha, outcome=outcome, changed_files=changed, tampered_files=tampered)


@task(name="nitr-grade", task_run_name="grade-step-{step}-attempt-{prepared.attempt}", cache_key_fn=nitr_grade_key,
      **NODE_OPTIONS)
def nitr_grade_task(prepared: NitrPrepared, run: RunContext, step: int, sha: str) -> NitrGrade:
    """Run the probe's evaluator on commit ``sha`` in a fresh grading tree; keep the module results."""
    inject_fault(run.home, "nitr-grade", step)
    probe = prepared.probe
    root = build_grading_tree(grading_root(run, probe.probe_id) / "tree", probe, Path(prepared.workspace), sha)
    # The same tree, never given to a sandbox: the tested code runs in ``root`` with write access
    # and could rewrite the evaluator or the sources that later modules and the file checks read.
    pristine = build_grading_tree(grading_root(run, probe.probe_id) / "pristine", probe, Path(prepared.workspace), sha)
    preflight.use_template(grading_root(run, probe.probe_id) / "build-template", root, probe)
    try:
        with in_sandbox(root, lambda tree_root: open_sandbox(sandbox_config(run, probe), tree_root, NITR_ENVIRONMENT,
                                                             run.paths, shared=shared_folders(probe))) as sandbox:
            grade = evaluate(probe.grading_pipeline(), sandbox, root, ceiling_s=run.config.test_timeout_s,
                             output_limit=run.config.output_limit_bytes, places=probe.places(), pristine=pristine)
    finally:
        treefs.clear(pristine)
    artifacts = run.paths.artifacts(run.run_id, probe.probe_id) / f"attempt-{prepared.attempt}-step-{step}"
    artifacts.mkdir(parents=True, exist_ok=True)
    (artifacts / "grade.json").write_text(grade.model_dump_json(indent=2))
    run_logger().info("probe %s, attempt %d, step %d: %s in %.1f s", probe.probe_id, prepared.attempt, step,
                      grade.summary(), grade.duration_s)
    return grade
