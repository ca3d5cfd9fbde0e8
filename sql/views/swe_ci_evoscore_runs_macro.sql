-- evoscore_runs(gamma := 1.0): a run's EvoScore, the mean of its scored tasks' EvoScores.
--
-- Grain: one row per run with protocol 'swe-ci' (a run without tasks has evoscore NULL).
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §2.3 and §4.2), computed by
--   `swe_ci_evoscore_runs_by_gamma`: evoscore = mean over scored tasks of `evoscore(gamma)`.
--
-- Edge cases: unscored tasks (infra_error, invalid, no_gap, incomplete, …) are excluded from
-- the mean — never averaged in as 0 or −1 — and counted in n_unscored. No scored task →
-- evoscore NULL. γ ≤ 0 raises an error.
-- Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--   included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons plus
--   'dataset_error' and 'not_started') and complete = every expected task was scored. A run
--   with complete = false is partial: never publish its rates as the whole dataset's.
--
-- Columns: run_id, gamma, n_tasks, n_scored, n_unscored, evoscore, tasks_expected, tasks_unscored,
--   unscored_reasons, complete.
--
-- Example: select * from evoscore_runs(gamma := 2.0) order by evoscore desc

create or replace macro evoscore_runs(gamma := 1.0) as table

with

final as (
    select * from swe_ci_evoscore_runs_by_gamma(gammas := [gamma])
)

select * from final
