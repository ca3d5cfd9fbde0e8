"""The ``continual`` flow: SWE-Bench-CL sequences, memory on or off, the re-test matrix a(i, j).

Per sequence (arXiv 2507.00014; indexing in ``cl_attempts.sql``): **prepare** every issue
(the SWE-EVO prepare node), then the steps of ``evoci.swe_bench_cl.plan.schedule``: the
memory-off pass a(0, j); processing issue j = the in-sequence attempt a(j−1, j) with memory
M(j−1), then storing its experience → M(j); re-tests a(i, j), i ≥ j, which read M(i) and
never write memory. Each attempt = retrieve → **agent** node → **test** node → one
``iterations`` row at (memory stage, attempt). ``matrix`` = ``full`` (every cell F needs)
or ``core`` (the 4N−2 cells of ACC, FT, BWT, AULC, CL-P); ``attempts`` per cell.

An issue whose repository or record is unusable is ``input_error`` and its cells stay
empty (NULL in ``cl_matrix``, never 0); the sequence goes on. An infrastructure fault whose
retries ran out stops that sequence (its memory chain would be wrong), marks the issue
``infra_error``, and fails the flow run so it can be retried: completed nodes and stored
experiences are read back, nothing is written twice.

With ``task_deployment`` (``continual_sequence/NAME`` on a work pool) each sequence is a flow run
of that deployment, which any worker takes (``evoci.deployments.pool``): it is passed by
identity (the curriculum as given, the sequence id and its issues' hashes), and the worker reads
the curriculum where its own host has it (``swe-bench-cl-demo`` is built in the worker's home).
Its memory lives in the results store, so it is the same whichever worker writes it.
"""

from __future__ import annotations

import contextvars
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

from prefect import flow
from prefect.logging import get_run_logger
from pydantic import BaseModel

from evoci import interrupt
from evoci.deployments.pool import OnPool, absolute, check_pool, join_on_worker
from evoci.domain import RunConfig, stable_hash
from evoci.flows.benchmark import each_in_subflows
from evoci.errors import EnvironmentBuildError, EnvironmentInvalid, InfrastructureError, InputError
from evoci.runtime import RunContext
from evoci.store import lease, reading
from evoci.swe_bench_cl.agents import check_agent
from evoci.swe_bench_cl.datasets import DEMO, load_cl_dataset
from evoci.swe_bench_cl.embedding import EmbeddingConfig, make_embedder, resolve_embedding
from evoci.swe_bench_cl.loader import CLIssue, CLSequence
from evoci.swe_bench_cl.memory import Experience, Memory, MemoryConfig, render_memory
from evoci.swe_bench_cl.plan import Cell, Store, schedule
from evoci.swe_bench_cl.record import CLRecorder
from evoci.swebench.grade import Grade
from evoci.tasks.continual import cl_agent_task, cl_grade_task
from evoci.tasks.identity import ended, record_run
from evoci.tasks.swe_evo import EvoPrepared, evo_prepare_task, evo_validate_task, node_options


class SequenceSummary(BaseModel):
    run_id: str
    sequence_id: str
    issues: int
    attempts: int
    status: str  # done | infra_error
    reason: str | None = None


@flow(name="continual", flow_run_name="continual-{dataset}-{matrix}")
def continual(dataset: str = "swe-bench-cl-demo", config: RunConfig = RunConfig(protocol="swe-bench-cl"),
              matrix: str = "full", attempts: int = 1, memory: MemoryConfig = MemoryConfig(),
              embedding: EmbeddingConfig = EmbeddingConfig(), repos: str | None = None,
              environments: str | None = None, home: str | None = None,
              db: str | None = None, task_deployment: str | None = None) -> list[SequenceSummary]:
    """Run every sequence of ``dataset`` (``swe-bench-cl-demo`` or a curriculum JSON file).

    The agent is ``config.programmer`` (gold, null, scripted, llm, command). ``repos`` is the
    folder of local clones; ``environments`` a file of SWE-bench-style records keyed by
    instance_id giving each issue's test command, log parser and Python.
    ``task_deployment`` (``continual_sequence/NAME`` on a work pool) runs each sequence as a flow
    run of it, on whichever worker takes it; ``config.concurrency`` is then how many are queued at once.
    """
    interrupt.reclaim()  # SIGTERM stops this flow's workers at once, as SIGINT does (evoci/interrupt.py)
    with lease.scope():  # the leases this flow takes end with it (or with the command around it)
        log = get_run_logger()
        if attempts < 1:
            raise InputError(f"attempts must be ≥ 1, got {attempts}")
        schedule(1, matrix)  # a bad matrix name fails here, before anything is recorded
        config = config.model_copy(update={"protocol": "swe-bench-cl", "programmer": check_agent(config.programmer)})
        embedding = resolve_embedding(embedding)
        data, name = load_cl_dataset(dataset, [matrix, attempts, memory, embedding], repos=repos,
                                     environments=environments, home=home)
        run = RunContext.create(config, name, home=home, db=db)
        if task_deployment:
            check_pool(task_deployment, "continual_sequence", run.db)
        recorder = CLRecorder(run)
        issues, n_max = sum(len(s.issues) for s in data.sequences), max((s.n for s in data.sequences), default=0)
        recorder.run_started(issues, n_max, data.errors)
        for error in data.errors:
            log.error("skipped: %s", error)
        store = Memory(run.db, run.run_id, make_embedder(embedding), memory)
        log.info("run %s: %d sequence(s) of %s, agent %s, matrix %s, %d attempt(s) per cell, memory %s (%s)",
                 run.run_id, len(data.sequences), name, config.programmer.kind, matrix, attempts,
                 "on" if memory.enabled else "off", store.embedder.name)
        lost: list[str] = []
        if task_deployment:
            settings = {"dataset": dataset, "matrix": matrix, "attempts": attempts, "memory": memory,
                        "embedding": embedding, "repos": repos, "environments": environments}
            summaries, lost = _on_pool(task_deployment, run, data.sequences, settings)
        else:
            with ThreadPoolExecutor(max_workers=config.concurrency, thread_name_prefix="continual") as pool:
                futures = [pool.submit(contextvars.copy_context().run, run_sequence, sequence, run, recorder, store,
                                       matrix, attempts) for sequence in data.sequences]
            summaries = [future.result() for future in futures]
        recorder.run_finished()
        failed = [f"{s.sequence_id}: {s.reason}" for s in summaries if s.status != "done"] + lost
        if failed:
            raise RuntimeError(f"{len(failed)} sequence(s) stopped for infrastructure reasons (retry this flow run): "
                               + "; ".join(failed))
        return summaries


def sequence_identity(sequence: CLSequence) -> str:
    """The sequence's content as any host reads it: its issues' places and records (no paths of this host)."""
    return stable_hash([(issue.position, issue.instance.record_hash) for issue in sequence.issues])


def sequence_lease(sequence_id: str) -> str:
    """The lease key of a sequence on a work pool (beside the leases of tasks and of the run)."""
    return f"sequence:{sequence_id}"


def _on_pool(deployment: str, run: RunContext, sequences: list[CLSequence],
             settings: dict) -> tuple[list[SequenceSummary], list[str]]:
    """Every sequence as a flow run of ``deployment``; (summaries of those that completed, 'id: why' of the others)."""
    shared = {**settings, "dataset": settings["dataset"] if settings["dataset"] == DEMO else absolute(settings["dataset"]),
              "repos": absolute(settings["repos"]), "environments": absolute(settings["environments"]),
              "memory": settings["memory"].model_dump(mode="json"), "embedding": settings["embedding"].model_dump(mode="json"),
              "config": run.config.model_dump(mode="json"), "run_dataset": run.dataset, "home": None, "db": str(run.db)}

    def unit(sequence: CLSequence) -> tuple[str, str, dict]:
        return sequence.sequence_id, sequence_lease(sequence.sequence_id), {
            **shared, "sequence_id": sequence.sequence_id, "identity": sequence_identity(sequence)}

    summaries, failures, _ = each_in_subflows(OnPool(deployment, run, unit, sequence_summary),
                                              [(s.sequence_id, s) for s in sequences], run.config.concurrency)
    return summaries, [f"{name}: {exc}" for name, exc in failures]


def sequence_summary(run: RunContext, sequence_id: str) -> SequenceSummary:
    """How a sequence ended, as its worker recorded it in the results store."""
    with reading(run.db, run_id=run.run_id) as con:
        issues, attempts = con.execute(
            """select count(distinct t.task_id), count(i.task_id) from tasks t
               left join iterations i on i.run_id = t.run_id and i.task_id = t.task_id
               where t.run_id = ? and t.sequence_id = ?""", [run.run_id, sequence_id]).fetchone()
        stopped = con.execute("""select reason from tasks where run_id = ? and sequence_id = ? and status = 'infra_error'
                                 order by sequence_position limit 1""", [run.run_id, sequence_id]).fetchone()
    if not issues:
        return SequenceSummary(run_id=run.run_id, sequence_id=sequence_id, issues=0, attempts=0, status="not_started",
                               reason="no worker recorded it")
    return SequenceSummary(run_id=run.run_id, sequence_id=sequence_id, issues=issues, attempts=attempts,
                           status="infra_error" if stopped else "done", reason=stopped[0] if stopped else None)


@flow(name="continual_sequence", flow_run_name="continual-{sequence_id}")
def continual_sequence(dataset: str, sequence_id: str, identity: str, config: RunConfig, run_dataset: str,
                       matrix: str = "full", attempts: int = 1, memory: MemoryConfig = MemoryConfig(),
                       embedding: EmbeddingConfig = EmbeddingConfig(), repos: str | None = None,
                       environments: str | None = None, home: str | None = None,
                       db: str | None = None) -> SequenceSummary:
    """One sequence of a SWE-Bench-CL run, on the worker that took it (``continual(task_deployment=…)``).

    ``dataset``, ``repos`` and ``environments`` are read as this host has them; the sequence must
    be the one the run was given (``identity``). ``config`` carries the run's id and
    ``run_dataset`` its name, so the facts and the memory join the run that queued it. A sequence
    stopped by an infrastructure fault fails the flow run, so it can be retried.
    """
    with lease.scope():  # the leases this flow takes end with it
        data, _ = load_cl_dataset(dataset, [matrix, attempts, memory, embedding], repos=repos,
                                  environments=environments, home=home)
        sequence = next((s for s in data.sequences if s.sequence_id == sequence_id), None)
        run = join_on_worker(config, run_dataset, home=home, db=db, key=sequence_lease(sequence_id),
                             what=f"sequence {sequence_id}", found=sequence and sequence_identity(sequence),
                             expected=identity, where=dataset,
                             fix="give every worker the same curriculum (and --repos) at the same path")
        record_run(run)
        store = Memory(run.db, run.run_id, make_embedder(embedding), memory)
        summary = run_sequence(sequence, run, CLRecorder(run), store, matrix, attempts)
        if summary.status != "done":
            raise InfrastructureError(f"sequence {sequence_id} stopped: {summary.reason}")
        return summary


def run_sequence(sequence: CLSequence, run: RunContext, recorder: CLRecorder, store: Memory, matrix: str,
                 attempts: int) -> SequenceSummary:
    summary = SequenceSummary(run_id=run.run_id, sequence_id=sequence.sequence_id, issues=len(sequence.issues),
                              attempts=0, status="done")
    options = node_options(run)
    by_position = {issue.position: issue for issue in sequence.issues}
    prepared: dict[int, EvoPrepared] = {}
    grades: dict[tuple[int, int], list[tuple[CLIssue, Grade, str]]] = {}
    current: CLIssue | None = None
    try:
        for issue in sequence.issues:
            current = issue
            recorder.issue_started(issue)
            try:
                prepared[issue.position] = evo_prepare_task.with_options(**options)(issue.instance, run)
            except InputError as exc:
                get_run_logger().error("issue %s: %s", issue.instance_id, exc)
                recorder.issue_status(issue, "input_error", str(exc), exc)
                continue
            recorder.prepared(issue, prepared[issue.position].base_sha, prepared[issue.position].environment.content_hash)
            try:  # proven on the clean base before any attempt is graded in it (evoci.swebench.validate)
                evo_validate_task.with_options(**{**options, "retries": 0})(prepared[issue.position], run)
            except (EnvironmentInvalid, EnvironmentBuildError) as exc:
                get_run_logger().error("issue %s: environment_error — %s", issue.instance_id, exc)
                recorder.issue_status(issue, "environment_error", str(exc), exc)
                del prepared[issue.position]
            except InputError as exc:  # the record's test_patch does not apply to its base: bad input, named
                get_run_logger().error("issue %s: %s", issue.instance_id, exc)
                recorder.issue_status(issue, "input_error", str(exc), exc)
                del prepared[issue.position]
        for step in schedule(sequence.n, matrix):
            issue = current = by_position.get(step.position)
            if issue is None or step.position not in prepared:
                continue  # no issue at this position, or a bad one: its cells stay NULL
            if isinstance(step, Store):
                if store.config.enabled:
                    store.store(sequence.sequence_id, step.position, experience(issue, grades[(step.source.stage,
                                                                                               step.position)]))
                continue
            try:
                for attempt in range(attempts):
                    grades.setdefault((step.stage, step.position), []).append(
                        attempt_cell(issue, prepared[step.position], step, attempt, run, recorder, store, options))
                    summary.attempts += 1
            except InputError as exc:  # e.g. the record's test_patch does not apply: no cell of it can be scored
                get_run_logger().error("issue %s: %s", issue.instance_id, exc)
                recorder.issue_status(issue, "input_error", str(exc), exc)
                del prepared[step.position]
        for issue in sequence.issues:
            if issue.position in prepared:
                recorder.issue_status(issue, "done")
    except InfrastructureError as exc:  # retries exhausted: never scored; the flow run fails so it can be retried
        if current is not None:
            recorder.issue_status(current, "infra_error", str(exc), exc)
        return summary.model_copy(update={"status": "infra_error", "reason": str(exc)})
    except BaseException as exc:  # a signal, or a failure evoci did not foresee: recorded, never left 'running'
        if current is not None:
            ended(run, current.instance_id, exc)
        raise
    return summary


def attempt_cell(issue: CLIssue, prepared: EvoPrepared, cell: Cell, attempt: int, run: RunContext,
                 recorder: CLRecorder, store: Memory, options: dict) -> tuple[CLIssue, Grade, str]:
    """retrieve M(i) → agent → test → one iterations row; returns what the experience is made of."""
    started, t0 = _now(), time.monotonic()
    retrieved, retrieval_s = ([], 0.0)
    if store.config.enabled:
        retrieved, retrieval_s = store.retrieve(issue.sequence_id, cell.stage, issue.problem_statement)
    text = render_memory(retrieved)
    prediction = cl_agent_task.with_options(**options)(prepared, run, issue, cell.stage, attempt, text)
    grade = cl_grade_task.with_options(**options)(prepared, run, issue, cell.stage, attempt, prediction.patch)
    recorder.attempted(issue, cell.stage, attempt, prediction, grade, started, _now(), time.monotonic() - t0,
                       retrieved, retrieval_s)
    summary = _solution_summary(prediction.patch) + (f" Agent: {prediction.outcome.message.strip()[:400]}"
                                                     if prediction.outcome.message.strip() else "")
    return issue, grade, summary


def experience(issue: CLIssue, graded: list[tuple[CLIssue, Grade, str]]) -> Experience:
    """What processing ``issue`` taught: its first resolved attempt if any, else its first attempt."""
    resolved = [g for g in graded if _resolved(issue, g[1])]
    _, grade, summary = (resolved or graded)[0]
    outcome = "resolved" if resolved else "unresolved"
    failing = [t for t in issue.instance.f2p if grade.outcomes.get(t) != "passed"]
    rationale = ("the issue's tests passed" if resolved else
                 f"grading: {grade.status}; {len(failing)} of {len(issue.instance.f2p)} failing tests still fail")
    return Experience(task_id=issue.instance_id, problem=issue.problem_statement, solution_summary=summary,
                      outcome=outcome, rationale=rationale)


def _resolved(issue: CLIssue, grade: Grade) -> bool:
    targets = [*issue.instance.f2p, *issue.instance.p2p]
    return bool(issue.instance.f2p) and all(grade.outcomes.get(t) == "passed" for t in targets)


def _solution_summary(patch: str | None) -> str:
    """Files changed and lines added/removed (the patch itself stays out of the memory)."""
    if not patch:
        return "No change was made."
    files = [line[len("+++ b/"):] for line in patch.splitlines() if line.startswith("+++ b/")]
    added = sum(1 for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in patch.splitlines() if line.startswith("-") and not line.startswith("---"))
    return f"Changed {', '.join(files) or 'files'} (+{added} −{removed} lines)."


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)
