-- swe_ci_tasks: whether each SWE-CI task can be scored, and why not.
--
-- Grain: one row per run × task with protocol 'swe-ci' (every row of `tasks`, including
--        tasks that never recorded an iteration).
--
-- Every per-task SWE-CI metric (EvoScore, zero-regression, solved, turns, regression rates)
-- reads `scored` / `reason` from here, so all of them leave the same tasks out.
--
-- Columns:
--   max_iterations  N = runs.max_iterations
--   last_iteration  the highest recorded iteration (attempt 0); NULL when none is recorded
--   a_last          a(c_last), carried forward to N by EvoScore when the task was solved early
--   a_series        [a_1, …, a_last] in iteration order (a_series[i] = a_i when scored), so
--                   EvoScore reads `swe_ci_iterations` once, through this view
--   regressions_series  [regressions_1, …, regressions_last] (see `swe_ci_iterations`)
--   regression_iterations / regressed_tests
--                   iterations i ≥ 1 with ≥ 1 regression / Σ regressions (raw counts, also for
--                   unscored tasks; `swe_ci_zero_regression` nulls them when not scored)
--   solved          all of T passed at last_iteration (n_passed = n_target); NULL unless scored
--   turns           iterations used = last_iteration (≥ 1); NULL unless scored
--   scored          reason is NULL
--   reason          why the task has no score (checked in this order):
--     'infra_error'           tasks.status = 'infra_error': retries of an infrastructure
--                             failure were exhausted (see `failures`). Never scored as −1.
--     'input_error'           tasks.status = 'input_error': the task could not be prepared.
--     'invalid'               tasks.status = 'invalid' (tasks.reason says why).
--     'incomplete'            iteration 0 (the base c0) was never recorded.
--     'no_gap'                n(c*) = n(c0): nothing to evolve, a would divide by zero.
--     'no_max_iterations'     runs.max_iterations is NULL, so N is unknown.
--     'beyond_max_iterations' an iteration above N was recorded (inconsistent run).
--     'missing_iteration'     some iteration in 1..last_iteration has no row.
--     'incomplete'            no iteration ≥ 1 yet, or the last iteration is below N and did
--                             not solve the task. This covers a task still 'running', a loop
--                             that stopped early without solving it, and a task marked 'done'
--                             below N unsolved (only possible if it ran with a lower limit
--                             than the run's N): padding it as if solved would be wrong.
--   A task is scored when none applies: it was solved at its last iteration (≤ N) or it
--   reached iteration N. This is decided by the recorded facts, so a task whose status is
--   still 'running' (the status upsert lags the last fact) is scored once its facts are
--   complete.
--
-- Source: SWE-CI paper (arXiv 2603.03823) §2.2–2.3, appendix B.1 (solved rate) and B.2 (turns);
-- evoci's metric definitions "Edge cases".

create or replace view swe_ci_tasks as

with

swe_ci_tasks as (
    select run_id, task_id, status as task_status
    from tasks
    where protocol = 'swe-ci'
),

target_counts as (
    select run_id, task_id, count(*) as n_target
    from targets
    where role = 'target'
    group by run_id, task_id
),

iteration_summary as (
    select
        run_id,
        task_id,
        any_value(n_base) as n_base,
        max(iteration) as last_iteration,
        count(*) filter (where iteration >= 1) as n_iterations_recorded,
        arg_max(n_passed, iteration) as n_passed_last,
        arg_max(a, iteration) as a_last,
        list(a order by iteration) filter (where iteration >= 1) as a_series,
        list(regressions order by iteration) filter (where iteration >= 1) as regressions_series,
        count(*) filter (where regressions > 0) as regression_iterations,
        coalesce(sum(regressions), 0) as regressed_tests
    from swe_ci_iterations
    group by run_id, task_id
),

joined as (
    select
        t.run_id,
        t.task_id,
        t.task_status,
        runs.max_iterations,
        coalesce(tc.n_target, 0) as n_target,
        s.n_base,
        s.last_iteration,
        s.n_iterations_recorded,
        s.n_passed_last,
        s.a_last,
        s.a_series,
        s.regressions_series,
        s.regression_iterations,
        s.regressed_tests,
        s.n_passed_last = coalesce(tc.n_target, 0) as solved_last
    from swe_ci_tasks as t
    left join runs using (run_id)
    left join target_counts as tc using (run_id, task_id)
    left join iteration_summary as s using (run_id, task_id)
),

reasoned as (
    select
        joined.*,
        case
            when task_status = 'infra_error' then 'infra_error'
            when task_status = 'input_error' then 'input_error'
            when task_status = 'invalid' then 'invalid'
            when n_base is null then 'incomplete'
            when n_target = n_base then 'no_gap'
            when max_iterations is null then 'no_max_iterations'
            when last_iteration > max_iterations then 'beyond_max_iterations'
            when n_iterations_recorded <> last_iteration then 'missing_iteration'
            when last_iteration = 0 then 'incomplete'
            when last_iteration < max_iterations and not solved_last then 'incomplete'
        end as reason
    from joined
),

final as (
    select
        run_id,
        task_id,
        task_status,
        max_iterations,
        n_target,
        n_base,
        last_iteration,
        a_last,
        a_series,
        regressions_series,
        regression_iterations,
        regressed_tests,
        case when reason is null then solved_last end as solved,
        case when reason is null then last_iteration end as turns,
        reason is null as scored,
        reason
    from reasoned
)

select * from final
