-- swe_ci_evoscore: EvoScore of each SWE-CI task at γ = 1 (the mean normalized change).
--
-- Grain: one row per run × task with protocol 'swe-ci'.
--
-- Formula: `evoscore(gamma := 1.0)`; see swe_ci_evoscore_macro.sql (SWE-CI paper, arXiv 2603.03823,
-- §2.3, eq. 3). For another γ call the macro.
--
-- Edge cases: as `evoscore` — evoscore is NULL with a reason for tasks that cannot be scored.

create or replace view swe_ci_evoscore as

with

final as (
    select * from evoscore(gamma := 1.0)
)

select * from final
