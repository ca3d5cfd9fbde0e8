-- swe_ci_zero_regression_runs: each SWE-CI run's zero-regression rate.
--
-- Grain: one row per run with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.3, Fig. 6): zero_regression_rate =
--   n_zero_regression / n_scored, the share of scored tasks in which no regression occurred
--   in the whole maintenance process (`swe_ci_zero_regression`).
--
-- Edge cases: unscored tasks (infra_error, invalid, no_gap, incomplete, …) are excluded
-- from both counts and reported in n_unscored; no scored task → rate NULL.
-- Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--   included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons plus
--   'dataset_error' and 'not_started') and complete = every expected task was scored. A run
--   with complete = false is partial: never publish its rates as the whole dataset's.

create or replace view swe_ci_zero_regression_runs as

with

swe_ci_runs as (
    select run_id
    from runs
    where protocol = 'swe-ci'
),

run_counts as (
    select
        run_id,
        count(*) as n_tasks,
        count(*) filter (where scored) as n_scored,
        count(*) filter (where zero_regression) as n_zero_regression
    from swe_ci_zero_regression
    group by run_id
),

final as (
    select
        r.run_id,
        coalesce(c.n_tasks, 0) as n_tasks,
        coalesce(c.n_scored, 0) as n_scored,
        coalesce(c.n_tasks - c.n_scored, 0) as n_unscored,
        coalesce(c.n_zero_regression, 0) as n_zero_regression,
        c.n_zero_regression / nullif(c.n_scored, 0) as zero_regression_rate,
        done.tasks_expected,
        done.tasks_unscored,
        done.unscored_reasons,
        done.complete
    from swe_ci_runs as r
    left join run_counts as c using (run_id)
    left join run_completeness as done using (run_id)
)

select * from final
