-- swe_ci_iterations: SWE-CI's normalized change a(c_i), regressions and fixes per iteration.
--
-- Grain: one row per run × task × iteration (0 = the base codebase c0) that has a row in
--        `iterations` (attempt 0), for tasks with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §2.2, eq. 1–2):
--   T          = targets rows with role 'target' for (run, task); n_target = n(c*) = |T|
--   n_passed   = n(c_i) = |{t ∈ T : outcome of t at iteration i (attempt 0) is 'passed'}|
--   n_base     = n(c0)  = n_passed at iteration 0
--   a          = (n_passed − n_base) / (n_target − n_base)   if n_passed ≥ n_base
--                (n_passed − n_base) / n_base                otherwise           a ∈ [−1, 1]
--   regressions = |{t ∈ T : t passed at i−1 and did not pass at i}|   (test level, §4.3)
--   fixes       = |{t ∈ T : t did not pass at i−1 and passed at i}|
--
-- Edge cases:
--   * No gap (n_target = n_base, including an empty T) or tasks.status = 'invalid':
--     valid = false and a = NULL; nothing is ever divided by zero. n_passed < n_base implies
--     n_base > 0, so the second branch is safe.
--   * A target test with no test_results row at an iteration counts as not passed (the writer
--     records 'missing'; an absent row means the same).
--   * An 'agent_error' / 'timeout' iteration is scored from what passed: usually nothing,
--     so a = −1. It is the agent's fault, not the harness's.
--   * An iteration that failed for infrastructure reasons has no `iterations` row, so it has
--     no row here (the task is 'infra_error'; `swe_ci_tasks` leaves its score NULL).
--   * regressions / fixes are NULL at iteration 0 and whenever iteration i−1 has no row
--     (nothing to compare with). A swap (one test fixed, another broken) counts as one
--     regression and one fix although n_passed is unchanged.
--   * Results of attempts other than 0 and outcomes of tests outside T are ignored.
--   * `valid` is about the task's gap only; whether the task gets a score (not infra_error,
--     complete, …) is decided per task in `swe_ci_tasks`.
--   * Iterations above 126 raise an error (see Implementation); SWE-CI uses N = 20.
--
-- Implementation (chosen with `benchmarks/metrics_bench.py --strategies`: 1.5–7× faster than
-- a self-join of the test rows on (run, task, test, i − 1) or lag() over test partitions):
-- test_results is read once and grouped per test into a 127-bit mask, bit i set ⇔ the test
-- passed at iteration i; tests with equal masks are then counted together. n_passed(i) =
-- #tests with bit i set, kept(i) = #tests with bits i−1 and i set (bit i−1 of
-- mask & (mask >> 1)), and
--   regressions(i) = n_passed(i−1) − kept(i),   fixes(i) = n_passed(i) − kept(i).

create or replace view swe_ci_iterations as

with

swe_ci_tasks as (
    select run_id, task_id, status as task_status
    from tasks
    where protocol = 'swe-ci'
),

recorded_iterations as (
    select iterations.run_id, iterations.task_id, iterations.iteration, iterations.status
    from iterations
    semi join swe_ci_tasks using (run_id, task_id)
    where iterations.attempt = 0 and iterations.iteration >= 0
),

test_masks as (
    -- one row per run × task × test of T; bit i of passed_mask ⇔ the test passed at iteration i.
    -- Grouping T's rows together with the passed rows restricts to T without a join.
    select run_id, task_id, bit_or(iteration_bit) as passed_mask
    from (
        select targets.run_id, targets.task_id, targets.test_id, 0::hugeint as iteration_bit,
            true as in_t
        from targets
        semi join swe_ci_tasks using (run_id, task_id)
        where targets.role = 'target'

        union all

        select run_id, task_id, test_id,
            1::hugeint << case
                when iteration <= 126 then iteration
                else error('swe_ci_iterations: iteration ' || iteration || ' > 126 is not supported')
            end,
            false
        from test_results
        where attempt = 0 and outcome = 'passed' and iteration >= 0
    )
    group by run_id, task_id, test_id
    having bool_or(in_t)
),

mask_counts as (
    -- tests with the same history share a row; bit j of kept_mask ⇔ passed at j and j + 1
    select
        run_id,
        task_id,
        passed_mask,
        passed_mask & (passed_mask >> 1) as kept_mask,
        count(*) as n_tests
    from test_masks
    group by run_id, task_id, passed_mask
),

target_counts as (
    select run_id, task_id, sum(n_tests) as n_target
    from mask_counts
    group by run_id, task_id
),

bit_counts as (
    select
        m.run_id,
        m.task_id,
        it.iteration,
        sum(m.n_tests) filter (where (m.passed_mask >> it.iteration) & 1 = 1) as n_passed,
        sum(m.n_tests) filter (
            where it.iteration >= 1 and (m.kept_mask >> (it.iteration - 1)) & 1 = 1
        ) as n_kept
    from mask_counts as m
    join recorded_iterations as it using (run_id, task_id)
    group by m.run_id, m.task_id, it.iteration
),

counted as (
    select
        it.run_id,
        it.task_id,
        it.iteration,
        it.status,
        t.task_status,
        coalesce(tc.n_target, 0) as n_target,
        coalesce(bc.n_passed, 0) as n_passed,
        coalesce(bc.n_kept, 0) as n_kept
    from recorded_iterations as it
    join swe_ci_tasks as t using (run_id, task_id)
    left join target_counts as tc using (run_id, task_id)
    left join bit_counts as bc using (run_id, task_id, iteration)
),

with_previous as (
    select
        counted.*,
        lag(iteration) over by_iteration = iteration - 1 as has_previous,
        lag(n_passed) over by_iteration as n_passed_previous,
        max(case when iteration = 0 then n_passed end) over by_task as n_base
    from counted
    window
        by_iteration as (partition by run_id, task_id order by iteration),
        by_task as (partition by run_id, task_id)
),

validated as (
    select
        with_previous.*,
        coalesce(task_status <> 'invalid' and n_base is not null and n_target > n_base, false)
            as valid
    from with_previous
),

final as (
    select
        run_id,
        task_id,
        iteration,
        status,
        n_target,
        n_base,
        n_passed,
        case
            when not valid then null
            when n_passed >= n_base then (n_passed - n_base) / (n_target - n_base)
            else (n_passed - n_base) / n_base
        end::double as a,
        case when has_previous then n_passed_previous - n_kept end as regressions,
        case when has_previous then n_passed - n_kept end as fixes,
        valid
    from validated
)

select * from final
