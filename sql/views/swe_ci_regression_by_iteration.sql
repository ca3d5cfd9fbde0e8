-- swe_ci_regression_by_iteration: how often and how badly a run's tasks regress at each
-- iteration.
--
-- Grain: one row per run × iteration i ≥ 1 reached by at least one scored task.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.3, Observation 4 / Fig. 7; evoci's metric definitions):
--   reached      = scored tasks with a recorded iteration i (padded iterations are not
--                  reached: nothing ran there)
--   regression_rate      = |{tasks in reached with regressions_i ≥ 1}| / |reached|
--   regression_magnitude = mean over the tasks that regressed at i of regressions_i / |T|
--                          (the share of the suite one regression breaks; NULL when no task
--                          regressed at i)
--   mean_regressed_share = mean over all reached tasks of regressions_i / |T|
--                          (= rate × magnitude; for readers who want the unconditional mean)
--
-- Edge cases: unscored tasks (infra_error, invalid, no_gap, incomplete, …) are left out.
-- A swap (one test fixed, another broken) counts as a regression. Read from
-- `swe_ci_tasks.regressions_series` (regressions_i of swe_ci_iterations, i = 1..last), so
-- swe_ci_iterations is evaluated once.

create or replace view swe_ci_regression_by_iteration as

with

scored_iterations as (
    select
        run_id,
        task_id,
        n_target,
        unnest(regressions_series) as regressions,
        unnest(range(1, len(regressions_series) + 1)) as iteration
    from swe_ci_tasks
    where scored
),

final as (
    select
        run_id,
        iteration,
        count(*) as n_tasks_reached,
        count(*) filter (where regressions > 0) as n_tasks_regressed,
        count(*) filter (where regressions > 0) / count(*) as regression_rate,
        avg(regressions / n_target) filter (where regressions > 0) as regression_magnitude,
        avg(regressions / n_target) as mean_regressed_share
    from scored_iterations
    group by run_id, iteration
)

select * from final
