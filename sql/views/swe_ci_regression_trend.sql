-- swe_ci_regression_trend: does a run regress more often, and more heavily, as iterations
-- go on?
--
-- Grain: one row per run with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.3, Observation 4 / Fig. 7): Pearson correlation
--   (DuckDB `corr`) between the iteration number and, over the rows of
--   `swe_ci_regression_by_iteration` for the run:
--     regression_rate_corr      ~ regression_rate        (n_rate_points iterations)
--     regression_magnitude_corr ~ regression_magnitude   (n_magnitude_points iterations:
--                                                         only those where a task regressed)
--
-- Edge cases: a correlation is NULL when it is undefined — fewer than 2 points, or zero
-- variance in either variable (e.g. the rate is the same at every iteration, or no task ever
-- regressed). DuckDB's corr returns NaN there; it is mapped to NULL.

create or replace view swe_ci_regression_trend as

with

swe_ci_runs as (
    select run_id
    from runs
    where protocol = 'swe-ci'
),

correlations as (
    select
        run_id,
        count(regression_rate) as n_rate_points,
        count(regression_magnitude) as n_magnitude_points,
        corr(regression_rate, iteration) as rate_corr,
        corr(regression_magnitude, iteration) as magnitude_corr
    from swe_ci_regression_by_iteration
    group by run_id
),

final as (
    select
        r.run_id,
        coalesce(c.n_rate_points, 0) as n_rate_points,
        case when not isnan(c.rate_corr) then c.rate_corr end as regression_rate_corr,
        coalesce(c.n_magnitude_points, 0) as n_magnitude_points,
        case when not isnan(c.magnitude_corr) then c.magnitude_corr end
            as regression_magnitude_corr
    from swe_ci_runs as r
    left join correlations as c using (run_id)
)

select * from final
