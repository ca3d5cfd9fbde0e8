-- swe_ci_evoscore_runs: each SWE-CI run's EvoScore at γ = 1.
--
-- Grain: one row per run with protocol 'swe-ci'.
--
-- Formula: `evoscore_runs(gamma := 1.0)`; see swe_ci_evoscore_runs_macro.sql (SWE-CI paper,
-- arXiv 2603.03823, §2.3). For another γ call the macro.
--
-- Edge cases: as `evoscore_runs` — the mean is over scored tasks only; the others are counted.

create or replace view swe_ci_evoscore_runs as

with

final as (
    select * from evoscore_runs(gamma := 1.0)
)

select * from final
