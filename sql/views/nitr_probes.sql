-- nitr_probes: the NITR outcome category of each probe in each configuration (run).
--
-- Grain:   one row per run × probe (every `tasks` row with protocol 'nitr').
-- Input:   nitr_attempts (one row per run × probe × attempt; its header gives the category
--          rule, the inputs and the edge cases). A probe is judged by its last attempt (the
--          largest attempt number; 0 unless the run made several). The rate views
--          (nitr_runs, nitr_by_dimension, nitr_by_granularity) read this view; every attempt
--          counts in nitr_stability and nitr_pass_at_k.
-- Formula (NITR, arXiv 2603.27745, §5.3 RQ3 and Figure 6; evoci's metric definitions "NITR"):
--   category ∈ {'Pass', 'F', 'S', 'B', 'E'} as in nitr_attempts, of the last attempt.
-- Edge cases: as nitr_attempts (category NULL = not evaluated, with flags saying why).
create or replace view nitr_probes as

with

last_attempts as (
    select *
    from nitr_attempts
    qualify row_number() over (partition by run_id, task_id order by attempt desc nulls last) = 1
),

final as (
    select * exclude (attempt) from last_attempts
)

select * from final
