"""The prepare node: resolve a task's refs, build its workspace and test environment."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from evoci.logs import run_logger

from evoci.domain import DEPENDENCY_FILES, TaskSpec
from evoci.runtime import Prepared, RunContext
from evoci.sandbox.environment import resolve_environment
from evoci.workspace import Workspace, open_source, oracle_checkout, resolve
from evoci.tasks.caching import prepare_key
from evoci.tasks.retry import NODE_OPTIONS


@task(
    name="prepare",
    task_run_name="prepare",
    cache_key_fn=prepare_key,
    **NODE_OPTIONS,
)
def prepare_task(task: TaskSpec, run: RunContext) -> Prepared:
    """Check the repo and refs (TaskSpecError names what is wrong), create the workspace."""
    source = open_source(task.repo)
    base_sha = resolve(source, task.base_ref, "base")
    oracle_sha = resolve(source, task.oracle_ref, "oracle")
    workspace, start_sha = Workspace.create(
        run.paths.workspace(run.run_id, task.task_id), source, base_sha, oracle_sha, task.tests_dir
    )
    oracle_dir = oracle_checkout(run.paths.workspace(run.run_id, task.task_id).parent / "oracle", source, oracle_sha)
    files = {name: (oracle_dir / name).read_text(errors="replace") for name in DEPENDENCY_FILES if (oracle_dir / name).is_file()}
    environment = resolve_environment(files)
    run_logger().info(
        "task %s: workspace ready — base %s with the oracle's tests (oracle %s), test environment %s (%d requirement(s))",
        task.task_id, base_sha[:10], oracle_sha[:10], environment.content_hash, len(environment.requirements),
    )
    return Prepared(
        task=task, base_sha=base_sha, oracle_sha=oracle_sha, start_sha=start_sha,
        workspace=str(workspace.path), workspace_id=run.paths.task_identity(run.run_id, task.task_id), oracle_dir=str(Path(oracle_dir)), environment=environment,
    )
