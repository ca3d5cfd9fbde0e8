"""Time the SWE-CI metric views on a synthetic result set of paper scale.

Builds runs × tasks × (iterations + 1) × tests test_results rows (default 1 × 100 × 21 ×
2,000 = 4.0 M: every tenth task is solved half-way and stops, so it has fewer) in a DuckDB
file in a temporary directory with bulk ``insert … select … from range(…)`` statements,
then times each query (one warm-up, median of ``--repeats``) and prints a table of absolute
seconds and the ratio to a baseline measured in the same process: one plain scan of
``test_results`` (``count(*), sum(outcome = 'passed')``).

``--strategies`` also times four ways of computing per-iteration regressions, the choice
behind ``swe_ci_iterations``: one group-by of the passed rows into a per-test bitmask of
iterations (what the view does), a self-join of the passed rows on (task, test, i − 1),
``lag()`` over test partitions, and a self-join of all rows.

    .venv/bin/python benchmarks/metrics_bench.py                  # paper scale, 2 threads
    .venv/bin/python benchmarks/metrics_bench.py --tasks 10 --tests 200 --strategies
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

import evoci.sql

QUERIES = {
    "evoscore per task": "select * from evoscore(gamma := 1.0)",
    "evoscore per run": "select * from evoscore_runs(gamma := 1.0)",
    "zero-regression per task": "select * from swe_ci_zero_regression",
    "zero-regression per run": "select * from swe_ci_zero_regression_runs",
}
EXTRA_QUERIES = {
    "swe_ci_iterations (all rows)": "select * from swe_ci_iterations",
    "regression trend per run": "select * from swe_ci_regression_trend",
    "gamma ranking (6 γ)": "select * from evoscore_gamma_ranking()",
}
BASELINE = "select count(*), sum((outcome = 'passed')::int) from test_results"

# Regressions per (run, task, iteration) over the target tests, three ways.
_PASSED = """
    select r.run_id, r.task_id, r.iteration, r.test_id
    from test_results r semi join targets t using (run_id, task_id, test_id)
    where r.attempt = 0 and r.outcome = 'passed'
"""
STRATEGIES = {
    "regressions: per-test bitmask (the view)": """
        select run_id, task_id, iteration, regressions from swe_ci_iterations where iteration >= 1
    """,
    "regressions: self-join passed rows": f"""
        with passed as ({_PASSED}),
        counts as (select run_id, task_id, iteration, count(*) n from passed group by all),
        kept as (
            select c.run_id, c.task_id, c.iteration, count(*) k
            from passed c join passed p
              on p.run_id = c.run_id and p.task_id = c.task_id and p.test_id = c.test_id
             and p.iteration = c.iteration - 1
            group by all)
        select c.run_id, c.task_id, c.iteration, p.n - coalesce(k.k, 0) as regressions
        from counts c
        join counts p on p.run_id = c.run_id and p.task_id = c.task_id and p.iteration = c.iteration - 1
        left join kept k
          on k.run_id = c.run_id and k.task_id = c.task_id and k.iteration = c.iteration
    """,
    "regressions: lag() over test partitions": """
        with cells as (
            select r.run_id, r.task_id, r.iteration, r.test_id, r.outcome = 'passed' as passed
            from test_results r semi join targets t using (run_id, task_id, test_id)
            where r.attempt = 0),
        lagged as (
            select *, lag(passed) over (partition by run_id, task_id, test_id order by iteration) prev
            from cells)
        select run_id, task_id, iteration, count(*) filter (where prev and not passed) regressions
        from lagged where iteration >= 1 group by all
    """,
    "regressions: self-join all rows": """
        with cells as (
            select r.run_id, r.task_id, r.iteration, r.test_id, r.outcome = 'passed' as passed
            from test_results r semi join targets t using (run_id, task_id, test_id)
            where r.attempt = 0)
        select c.run_id, c.task_id, c.iteration, count(*) filter (where p.passed and not c.passed) regressions
        from cells c join cells p
          on p.run_id = c.run_id and p.task_id = c.task_id and p.test_id = c.test_id
         and p.iteration = c.iteration - 1
        group by all
    """,
}


def build(con: duckdb.DuckDBPyConnection, runs: int, tasks: int, iterations: int, tests: int) -> None:
    """Fill the base tables with a synthetic SWE-CI result set.

    A test's pass threshold rises with the iteration, so most tests move from failed to
    passed; about a third of the tasks (chosen by hash) also have 0.5 % flaky flips
    (regressions); every tenth task passes everything at iteration N/2 and stops there
    (padded by EvoScore).
    """
    n = iterations
    con.execute(f"""
        insert into runs
        select 'bench-' || r, 'swe-ci', 'synthetic', {n}, 'bench', '{{}}', now(), now()
        from range({runs}) a(r)
    """)
    con.execute(f"""
        insert into tasks (run_id, task_id, protocol, status, updated_at)
        select 'bench-' || r, printf('task-%04d', k), 'swe-ci', 'done', now()
        from range({runs}) a(r), range({tasks}) b(k)
    """)
    con.execute(f"""
        insert into targets
        select run_id, task_id, printf('tests/test_mod%03d.py::test_case_%05d', j // 50, j), 'target'
        from tasks, range({tests}) c(j)
    """)
    con.execute(f"""
        insert into iterations (run_id, task_id, iteration, attempt, status)
        select run_id, task_id, i, 0, 'ok'
        from tasks, range({n} + 1) d(i)
        where i <= case when right(task_id, 1) = '0' then {n} // 2 else {n} end
    """)
    con.execute(f"""
        insert into test_results
        select it.run_id, it.task_id, it.iteration, 0, t.test_id,
            case
                when right(it.task_id, 1) = '0' and it.iteration = {n} // 2 then 'passed'
                when hash(it.task_id, t.test_id, it.iteration) % 200 = 0
                     and hash(it.task_id) % 3 = 1 then 'failed'
                when hash(it.task_id, t.test_id) % 1000 < 300 + 650 * it.iteration / {n} then 'passed'
                else 'failed'
            end
        from iterations it join targets t using (run_id, task_id)
    """)


def median_seconds(con: duckdb.DuckDBPyConnection, query: str, repeats: int) -> float:
    """One warm-up, then the median wall time of ``repeats`` fully fetched runs."""
    con.execute(query).fetchall()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        con.execute(query).fetchall()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs (default 1)")
    parser.add_argument("--tasks", type=int, default=100, help="tasks per run (default 100)")
    parser.add_argument("--iterations", type=int, default=20, help="N, iterations per task (default 20)")
    parser.add_argument("--tests", type=int, default=2000, help="target tests per task (default 2000)")
    parser.add_argument("--threads", type=int, default=2, help="DuckDB threads (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repetitions (default 3)")
    parser.add_argument("--extra", action="store_true", help="also time other SWE-CI views")
    parser.add_argument("--strategies", action="store_true", help="also time regression strategies")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="evoci-bench-") as tmp:
        con = duckdb.connect(str(Path(tmp) / "bench.duckdb"))
        con.execute(f"set threads = {args.threads}")
        evoci.sql.apply(con)
        start = time.perf_counter()
        build(con, args.runs, args.tasks, args.iterations, args.tests)
        con.execute("checkpoint")
        build_s = time.perf_counter() - start
        (n_results,) = con.execute("select count(*) from test_results").fetchone()
        print(
            f"{args.runs} run(s) × {args.tasks} tasks × N={args.iterations} × {args.tests} tests: "
            f"{n_results:,} test_results rows, built in {build_s:.1f} s; "
            f"threads={args.threads}, median of {args.repeats} after 1 warm-up\n"
        )

        baseline = median_seconds(con, BASELINE, args.repeats)
        queries = dict(QUERIES)
        if args.extra:
            queries |= EXTRA_QUERIES
        if args.strategies:
            queries |= STRATEGIES
        timings = {name: median_seconds(con, sql, args.repeats) for name, sql in queries.items()}
        con.close()

    total_name = "EvoScore + zero-regression (first 4)"
    width = max(len(name) for name in [*timings, total_name]) + 2
    print(f"{'query':<{width}}{'seconds':>9}{'× baseline':>12}")
    print(f"{'baseline: scan test_results':<{width}}{baseline:>9.3f}{1:>12.1f}")
    for name, seconds in timings.items():
        print(f"{name:<{width}}{seconds:>9.3f}{seconds / baseline:>12.1f}")
    headline = sum(timings[name] for name in QUERIES)
    print(f"{total_name:<{width}}{headline:>9.3f}{headline / baseline:>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
