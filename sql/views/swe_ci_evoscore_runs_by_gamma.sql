-- swe_ci_evoscore_runs_by_gamma(gammas := [1.0]): each SWE-CI run's EvoScore at every γ in a
-- list; `evoscore_runs` and `evoscore_gamma_ranking` read it.
--
-- Grain: one row per run (protocol 'swe-ci'; a run without tasks included) × γ in `gammas`.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §2.3 and §4.2): evoscore = mean over the run's scored
--   tasks of their EvoScore at γ (`swe_ci_evoscore_by_gamma`); n_scored + n_unscored = n_tasks.
--
-- Edge cases:
--   * Tasks without a score (infra_error, invalid, no_gap, incomplete, …) are left out of
--     the mean and counted in n_unscored (recorded tasks only). They are never averaged in as
--     0 or −1.
--   * Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--     included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons
--     plus 'dataset_error' and 'not_started') and complete = every expected task was scored.
--     A run with complete = false is partial: never publish its rates as the whole dataset's.
--   * No scored task → evoscore NULL.
--   * γ ≤ 0 raises an error; duplicate γ are collapsed.

create or replace macro swe_ci_evoscore_runs_by_gamma(gammas := [1.0]) as table

with

gamma_values as (
    select distinct swe_ci_checked_gamma(g) as gamma
    from (select unnest(gammas) as g)
),

swe_ci_runs as (
    select run_id
    from runs
    where protocol = 'swe-ci'
),

task_scores as (
    select * from swe_ci_evoscore_by_gamma(gammas := gammas)
),

run_scores as (
    select
        run_id,
        gamma,
        count(*) as n_tasks,
        count(*) filter (where reason is null) as n_scored,
        count(*) filter (where reason is not null) as n_unscored,
        avg(evoscore) filter (where reason is null) as evoscore
    from task_scores
    group by run_id, gamma
),

final as (
    select
        r.run_id,
        g.gamma,
        coalesce(s.n_tasks, 0) as n_tasks,
        coalesce(s.n_scored, 0) as n_scored,
        coalesce(s.n_unscored, 0) as n_unscored,
        s.evoscore,
        c.tasks_expected,
        c.tasks_unscored,
        c.unscored_reasons,
        c.complete
    from swe_ci_runs as r
    cross join gamma_values as g
    left join run_scores as s using (run_id, gamma)
    left join run_completeness as c using (run_id)
)

select * from final
