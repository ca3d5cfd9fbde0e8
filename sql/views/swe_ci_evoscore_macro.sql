-- evoscore(gamma := 1.0): SWE-CI's EvoScore of each task, for any γ > 0.
--
-- Grain: one row per run × task with protocol 'swe-ci' (unscored tasks included, with
--        evoscore NULL and a reason).
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §2.3, eq. 3), computed by `swe_ci_evoscore_by_gamma`:
--   e(γ) = Σ_{i=1..N} γ^i · a_i / Σ_{i=1..N} γ^i, N = runs.max_iterations.
--
-- Edge cases (detailed in swe_ci_evoscore_by_gamma.sql and swe_ci_tasks.sql):
--   * a task solved early at L < N carries a_L forward to N (padded_iterations = N − L);
--   * a task that stopped below N unsolved is 'incomplete', never padded;
--   * infra_error / invalid / no_gap / incomplete tasks: evoscore NULL with a reason,
--     never −1;
--   * γ ≤ 0 raises an error.
--
-- Columns: run_id, task_id, gamma, task_status, max_iterations, last_iteration,
--   padded_iterations, solved, evoscore, reason.
--
-- Example: select * from evoscore(gamma := 1.5) where run_id = 'my-run'

create or replace macro evoscore(gamma := 1.0) as table

with

final as (
    select * from swe_ci_evoscore_by_gamma(gammas := [gamma])
)

select * from final
