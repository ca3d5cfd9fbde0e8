-- cl_run_metrics_default: the SWE-Bench-CL metrics per run, with the default parameters.
--
-- Grain:   one row per run.
-- Formula: select * from cl_run_metrics() — the mean over the run's sequences of
--          cl_metrics() (β = 1, every λ = 1). Read cl_metrics.sql and cl_run_metrics.sql.
-- Columns: cl_run_metrics()'s, completeness included (tasks_expected, tasks_unscored,
--   unscored_reasons, complete).
create or replace view cl_run_metrics_default as

with

final as (
    select * from cl_run_metrics()
)

select * from final
