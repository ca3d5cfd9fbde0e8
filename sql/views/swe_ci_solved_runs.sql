-- swe_ci_solved_runs: each SWE-CI run's solved rate and average turns.
--
-- Grain: one row per run with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, appendix B.1 "solved rate", B.2 "average turns"):
--   solved_rate = n_solved / n_scored;  avg_turns = mean of `swe_ci_solved.turns` over
--   scored tasks (solved or not; an unsolved scored task used all N turns).
--
-- Edge cases: unscored tasks are excluded and counted in n_unscored; no scored task →
-- solved_rate and avg_turns NULL.
-- Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--   included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons plus
--   'dataset_error' and 'not_started') and complete = every expected task was scored. A run
--   with complete = false is partial: never publish its rates as the whole dataset's.

create or replace view swe_ci_solved_runs as

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
        count(*) filter (where solved) as n_solved,
        avg(turns) filter (where scored) as avg_turns
    from swe_ci_solved
    group by run_id
),

final as (
    select
        r.run_id,
        coalesce(c.n_tasks, 0) as n_tasks,
        coalesce(c.n_scored, 0) as n_scored,
        coalesce(c.n_tasks - c.n_scored, 0) as n_unscored,
        coalesce(c.n_solved, 0) as n_solved,
        c.n_solved / nullif(c.n_scored, 0) as solved_rate,
        c.avg_turns,
        done.tasks_expected,
        done.tasks_unscored,
        done.unscored_reasons,
        done.complete
    from swe_ci_runs as r
    left join run_counts as c using (run_id)
    left join run_completeness as done using (run_id)
)

select * from final
