-- evoscore_runs(gamma := 1.0): a run's EvoScore, the mean of its scored tasks' EvoScores.
--
-- Grain: one row per run with protocol 'swe-ci' (a run without tasks has evoscore NULL).
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §2.3 and §4.2), computed by
--   `swe_ci_evoscore_runs_by_gamma`: evoscore = mean over scored tasks of `evoscore(gamma)`.
--
-- Edge cases: unscored tasks (infra_error, invalid, no_gap, incomplete, …) are excluded from
-- the mean — never averaged in as 0 or −1 — and counted in n_unscored, with
-- `unscored_reasons` = {reason: count}. No scored task → evoscore NULL. γ ≤ 0 raises an error.
--
-- Columns: run_id, gamma, n_tasks, n_scored, n_unscored, evoscore, unscored_reasons.
--
-- Example: select * from evoscore_runs(gamma := 2.0) order by evoscore desc

create or replace macro evoscore_runs(gamma := 1.0) as table

with

final as (
    select * from swe_ci_evoscore_runs_by_gamma(gammas := [gamma])
)

select * from final
