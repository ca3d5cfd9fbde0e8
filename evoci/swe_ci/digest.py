"""A SWE-CI run's results as people read them: the numbers behind its report, artifacts and HTML page.

Every number here is selected from a SQL view (``sql/views/``); nothing is recomputed.
``evoci report``, the Prefect artifacts (``evoci.swe_ci.report``) and ``evoci report --html``
(``evoci.swe_ci.report_html``) all render a :class:`RunDigest`, so they always agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from evoci.digest import sql_hint
from evoci.errors import StorageError
from evoci.settings import location
from evoci.store.db import reading

# γ values of the ranking plot: the paper's range (SWE-CI §4.2, Fig. 5), 1 included.
RANKING_GAMMAS = [0.5, 0.75, 1.0, 1.25, 1.5, 2.0]

RUN = """
select r.run_id, r.dataset, r.max_iterations, r.config, r.created_at, r.finished_at,
       e.n_tasks, e.n_scored, e.evoscore, z.zero_regression_rate, s.n_solved, s.solved_rate, s.avg_turns,
       c.calls, c.cost_usd, c.input_tokens, c.output_tokens
from runs r
left join evoscore_runs(gamma := $gamma) e using (run_id)
left join swe_ci_zero_regression_runs z using (run_id)
left join swe_ci_solved_runs s using (run_id)
left join cost_by_run c using (run_id)
where r.run_id = $run_id
"""

# A task's digest needs only the run's record: the run-level views read every task of the run,
# which is a second or more per finished task in a large run, under the results file's lock.
RUN_RECORD = """
select r.run_id, r.dataset, r.max_iterations, r.config, r.created_at, r.finished_at,
       null, null, null, null, null, null, null, null, null, null, null
from runs r
where r.run_id = $run_id
"""

TASKS = """
select t.task_id, t.task_status, t.n_base, t.n_target, t.max_iterations, t.last_iteration, t.turns, t.solved,
       e.evoscore, e.padded_iterations, z.zero_regression, z.regressed_tests, c.calls, c.cost_usd,
       coalesce(tk.reason, t.reason) as reason
from swe_ci_tasks t
join evoscore(gamma := $gamma) e using (run_id, task_id)
join swe_ci_zero_regression z using (run_id, task_id)
left join cost_by_task c using (run_id, task_id)
left join tasks tk using (run_id, task_id)
where t.run_id = $run_id and ($task_id is null or t.task_id = $task_id)
order by t.task_id
"""

ITERATIONS = """
select v.task_id, v.iteration, v.status, v.n_passed, v.n_target, v.a, v.regressions, v.fixes,
       roles.architect_status, roles.programmer_status
from swe_ci_iterations as v
left join (select run_id, task_id, iteration, any_value(architect_status) as architect_status,
                  any_value(programmer_status) as programmer_status
           from iterations group by all) as roles using (run_id, task_id, iteration)
where v.run_id = $run_id and ($task_id is null or v.task_id = $task_id)
order by v.task_id, v.iteration
"""

INTEGRITY = """
select task_id, iteration, event, tampered_files, discarded_files, integrity_flags
from integrity_events
where run_id = $run_id and ($task_id is null or task_id = $task_id)
order by task_id, iteration, attempt
"""

# Runs compared with this one: the latest runs of the same dataset (this one included) that
# have a score. Ranked among themselves with evoscore_gamma_ranking's rule (dense rank by
# EvoScore, 1 = best); that view ranks every run in the file, whatever its dataset.
RANKING = """
with compared as (
    select run_id from runs
    where dataset = (select dataset from runs where run_id = $run_id)
    order by run_id = $run_id desc, created_at desc
    limit $max_runs
),
scores as (
    select run_id, gamma, evoscore
    from swe_ci_evoscore_runs_by_gamma(gammas := $gammas)
    semi join compared using (run_id)
    where evoscore is not null
)
select run_id, gamma, evoscore, dense_rank() over (partition by gamma order by evoscore desc) as rank
from scores
order by gamma, rank, run_id
"""
MAX_COMPARED_RUNS = 8


@dataclass
class IterationRow:
    iteration: int
    status: str
    n_passed: int
    n_target: int
    a: float | None
    regressions: int | None
    fixes: int | None
    architect_status: str | None = None  # how each role's attempt ended (NULL at iteration 0)
    programmer_status: str | None = None


@dataclass
class TaskDigest:
    task_id: str
    status: str
    n_base: int | None
    n_target: int
    max_iterations: int | None
    last_iteration: int | None
    turns: int | None
    solved: bool | None
    evoscore: float | None
    padded_iterations: int | None
    zero_regression: bool | None
    regressed_tests: int | None
    calls: int | None
    cost_usd: float | None
    reason: str | None
    iterations: list[IterationRow] = field(default_factory=list)


@dataclass
class RankingPoint:
    run_id: str
    gamma: float
    evoscore: float
    rank: int


@dataclass(frozen=True)
class IntegrityEvent:
    """One iteration whose grade the harness protected (``integrity_events``)."""

    task_id: str
    iteration: int
    event: str  # flagged | tampered | discarded
    tampered_files: list[str]
    discarded_files: list[str]
    integrity_flags: list[str]


@dataclass
class RunDigest:
    run_id: str
    dataset: str | None
    max_iterations: int | None
    config: dict[str, Any]
    created_at: datetime | None
    finished_at: datetime | None
    n_tasks: int
    n_scored: int
    evoscore: float | None
    zero_regression_rate: float | None
    n_solved: int
    solved_rate: float | None
    avg_turns: float | None
    calls: int
    cost_usd: float | None  # None: some call's price is unknown
    input_tokens: int
    output_tokens: int
    tasks: list[TaskDigest] = field(default_factory=list)
    ranking: list[RankingPoint] = field(default_factory=list)
    integrity: list[IntegrityEvent] = field(default_factory=list)
    db: Path | None = None  # the results file it was read from (hints name it)

    @property
    def compared_runs(self) -> list[str]:
        """The runs in the γ ranking (this one included); empty unless there are at least two."""
        runs = sorted({p.run_id for p in self.ranking})
        return runs if len(runs) > 1 else []

    def agents(self) -> str:
        architect = self.config.get("architect", {}) or {}
        programmer = self.config.get("programmer", {}) or {}
        describe = lambda a: a.get("kind", "?") + (f" ({a['model']})" if a.get("model") else "")  # noqa: E731
        return f"architect {describe(architect)}, programmer {describe(programmer)}"

    def sandbox(self) -> str:
        """The sandbox in words, saying loudly when agents' code ran without isolation."""
        sandbox = self.config.get("sandbox") or {}
        kind = sandbox.get("kind", "local")
        if kind == "host":
            why = (sandbox.get("options") or {}).get("unisolated_because")
            return "host — NOT isolated (" + (why or "chosen with --sandbox host") + ")"
        return {"local": "local (bubblewrap)"}.get(kind, kind)


def load_digest(db: Path, run_id: str, *, task_id: str | None = None, gamma: float = 1.0) -> RunDigest:
    """Read one run (or one of its tasks) from the views, read-only; EvoScores at ``gamma``.

    A task's digest leaves the run-level numbers (EvoScore of the run, cost, ...) empty.
    """
    import json

    params = {"run_id": run_id, "task_id": task_id}
    with reading(location(db)) as con:
        run = (con.execute(RUN_RECORD, {"run_id": run_id}) if task_id else
               con.execute(RUN, {"run_id": run_id, "gamma": gamma})).fetchone()
        if run is None:
            raise StorageError(f"no run {run_id!r} in {db} — list runs with: {sql_hint(db, 'select run_id from runs')}")
        tasks = con.execute(TASKS, {**params, "gamma": gamma}).fetchall()
        iterations = con.execute(ITERATIONS, params).fetchall()
        integrity = con.execute(INTEGRITY, params).fetchall()
        ranking = [] if task_id else con.execute(RANKING, {"run_id": run_id, "gammas": RANKING_GAMMAS,
                                                                    "max_runs": MAX_COMPARED_RUNS}).fetchall()
    (run_id, dataset, max_iterations, config, created_at, finished_at, n_tasks, n_scored, evoscore, zero_rate,
     n_solved, solved_rate, avg_turns, calls, cost_usd, input_tokens, output_tokens) = run
    by_task: dict[str, list[IterationRow]] = {}
    for task, *rest in iterations:
        by_task.setdefault(task, []).append(IterationRow(*rest))
    return RunDigest(
        run_id=run_id, dataset=dataset, max_iterations=max_iterations, config=json.loads(config or "{}"),
        created_at=created_at, finished_at=finished_at, n_tasks=n_tasks or 0, n_scored=n_scored or 0,
        evoscore=evoscore, zero_regression_rate=zero_rate, n_solved=n_solved or 0, solved_rate=solved_rate,
        avg_turns=avg_turns, calls=calls or 0, cost_usd=cost_usd if calls else 0.0, input_tokens=input_tokens or 0,
        output_tokens=output_tokens or 0,
        tasks=[TaskDigest(*row, iterations=by_task.get(row[0], [])) for row in tasks],
        ranking=[RankingPoint(*row) for row in ranking],
        integrity=[IntegrityEvent(*row) for row in integrity], db=location(db),
    )
