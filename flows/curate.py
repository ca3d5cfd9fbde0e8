"""The ``curate`` flow: mine SWE-CI tasks from repositories (SWE-CI §3.1).

For every repository: the candidate pairs of ``evoci.swe_ci.curation`` (maximal spans of the
first-parent history with unchanged dependency files, big enough); for each, a ``check-pair``
subflow builds the environment with self-repair, runs the oracle's tests on the oracle (T) and
on the base, and keeps the pair when n(c*) − n(c0) ≥ ``min_gap``. Pairs are checked
``concurrency`` at a time. Every pair, kept or rejected with its reason, is a row of
``curation_pairs``; the kept ones are written as a dataset JSONL that ``evoci run`` reads.

Resumable: the nodes are SWE-CI's, shared with ``evolve`` (``evoci.tasks.swe_ci``: prepare, and
test with self-repair), with their persisted, keyed results, and the curation run's id comes
from the repositories and the config, so the same command resumes.
"""

from __future__ import annotations

import contextvars
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path

import git
from prefect import flow
from prefect.logging import get_run_logger

from evoci import interrupt
from evoci.domain import RunConfig, SandboxConfig, TaskSpec, stable_hash
from evoci.errors import InputError
from evoci.runtime import RunContext
from evoci.store import lease, transaction
from evoci.swe_ci.curation import Candidate, CurateConfig, candidates
from evoci.workspace import Workspace
from evoci.tasks.swe_ci import oracle_with_repairs, passed_targets, run_nodes


@flow(name="curate", flow_run_name="curate-{run_id}")
def curate(repos: list[str], config: CurateConfig = CurateConfig(), sandbox: SandboxConfig = SandboxConfig(),
           output: str | None = None, home: str | None = None, db: str | None = None,
           run_id: str | None = None) -> list[dict]:
    """Check every candidate pair of ``repos``; write the kept ones to ``output`` (JSONL); return them."""
    interrupt.reclaim()  # SIGTERM stops this flow's workers at once, as SIGINT does (evoci/interrupt.py)
    log = get_run_logger()
    repos = [str(Path(r).absolute()) for r in repos]
    run_id = run_id or "curate-" + stable_hash({"repos": repos, "config": config.model_dump(), "sandbox": sandbox.model_dump()}, 10)
    run = RunContext.create(RunConfig(run_id=run_id, sandbox=sandbox, max_repairs=config.max_repairs), "curate",
                            home=home, db=db)
    # One writer per curation run, as for every run: a second process on it is refused (exit 75)
    # before it writes a row or touches a workspace the first one is using.
    with lease.scope():
        lease.acquire(run.db, run.run_id)
        jobs: list[tuple[str, Candidate]] = []
        for repo in repos:
            found = candidates(git.Repo(repo), config)
            log.info("%s: %d span(s), %d candidate pair(s) to test", repo, len(found), sum(c.reason is None for c in found))
            for candidate in found:
                if candidate.reason:
                    _record(run, repo, candidate, status="rejected", reason=candidate.reason)
                else:
                    jobs.append((repo, candidate))
        with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="curate") as pool:
            futures = [pool.submit(contextvars.copy_context().run, check_pair, repo, c, config, run) for repo, c in jobs]
        kept = [row for future in futures if (row := future.result())]
        path = Path(output) if output else run.paths.home / "curation" / f"{run.run_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in kept))
        log.info("curation %s: %d of %d tested pair(s) kept — dataset %s", run.run_id, len(kept), len(jobs), path)
        return kept


@flow(name="check-pair", flow_run_name="check-{task_id}")
def _check_pair(task_id: str, repo: str, candidate: Candidate, config: CurateConfig, run: RunContext) -> dict | None:
    span = candidate.span
    task = TaskSpec(task_id=task_id, repo=repo, base_ref=span.base_sha, oracle_ref=span.oracle_sha,
                    tests_dir=config.tests_dir)
    nodes = run_nodes(run)
    try:
        prepared = nodes["prepare"](task, run)
        # The run's lease is ours: a git lock in this pair's workspace is a killed process's, and would stop every node.
        Workspace(Path(prepared.workspace)).clear_stale_locks()
        oracle, prepared = oracle_with_repairs(nodes, prepared, run)
        targets = sorted(oracle.passed())
        base = nodes["test"](prepared, run, "0", prepared.start_sha) if targets else None
    except InputError as exc:
        _record(run, repo, candidate, status="rejected", reason=f"input_error: {exc}", task_id=task_id)
        return None
    n_oracle, n_base = len(targets), passed_targets(base, targets) if base else None
    gap = n_oracle - n_base if base else None
    if not targets:
        reason = f"no_oracle_tests: no test passes on the oracle (its run ended {oracle.status.value})"
    elif gap < config.min_gap:
        reason = f"small_gap: the oracle passes {gap} more target test(s) than the base (< {config.min_gap})"
    else:
        reason = None
    _record(run, repo, candidate, status="rejected" if reason else "kept", reason=reason, task_id=task_id,
            n_oracle=n_oracle, n_base=n_base, gap=gap)
    if reason:
        return None
    return {"task_id": task_id, "repo": repo, "base_ref": span.base_sha, "oracle_ref": span.oracle_sha,
            "tests_dir": config.tests_dir,
            "metadata": {"span": [span.first, span.last], "commits": span.commits, "changed_lines": candidate.changed_lines,
                         "changed_files": candidate.changed_files, "n_oracle": n_oracle, "n_base": n_base, "gap": gap,
                         "environment_hash": prepared.environment.content_hash}}


def check_pair(repo: str, candidate: Candidate, config: CurateConfig, run: RunContext) -> dict | None:
    """Run one pair's ``check-pair`` subflow; its row if kept."""
    span = candidate.span
    return _check_pair(f"{Path(repo).name}-{span.base_sha[:8]}-{span.oracle_sha[:8]}", repo, candidate, config, run)


def _record(run: RunContext, repo: str, c: Candidate, *, status: str, reason: str | None, task_id: str | None = None,
            n_oracle: int | None = None, n_base: int | None = None, gap: int | None = None) -> None:
    s = c.span
    with transaction(run.facts.path) as con:
        con.execute(
            "insert into curation_pairs values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing",
            [run.run_id, repo, s.base_sha, s.oracle_sha, s.first, s.last, s.commits, c.changed_lines, c.changed_files,
             n_oracle, n_base, gap, status, reason, task_id, datetime.now(timezone.utc).replace(tzinfo=None)],
        )
