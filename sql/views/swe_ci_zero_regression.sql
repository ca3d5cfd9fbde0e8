-- swe_ci_zero_regression: whether an SWE-CI task went through its whole loop without a
-- regression.
--
-- Grain: one row per run × task with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.3; evoci's metric definitions): zero_regression = no test of T that
--   passed at iteration i−1 fails to pass at iteration i, for any recorded i ≥ 1
--   (test level: `swe_ci_iterations.regressions` = 0 at every i ≥ 1).
--   regression_iterations = iterations with ≥ 1 regression; regressed_tests = Σ_i regressions
--   (a test broken twice counts twice).
--
-- Edge cases:
--   * Unscored tasks (`swe_ci_tasks.reason` set: infra_error, invalid, no_gap, incomplete, …)
--     get NULL in every metric column, keeping the same reason. An infrastructure failure is
--     never counted as a regression.
--   * A swap (one test fixed, another broken, count unchanged) is a regression.
--   * Padded iterations (after an early solve) are not real iterations and cannot regress.
--   * Counted in `swe_ci_tasks` (one pass over `swe_ci_iterations`).

create or replace view swe_ci_zero_regression as

with

final as (
    select
        run_id,
        task_id,
        scored,
        case when scored then regression_iterations = 0 end as zero_regression,
        case when scored then regression_iterations end as regression_iterations,
        case when scored then regressed_tests end as regressed_tests,
        reason
    from swe_ci_tasks
)

select * from final
