-- cl_metrics_default: the SWE-Bench-CL metrics with the default parameters.
--
-- Grain:   one row per run × sequence.
-- Formula: select * from cl_metrics() — β = 1 (so CL-Fβ = CL-F1) and every λ = 1.
--          Read cl_metrics.sql for the formulas (arXiv 2507.00014, §7), the indexing and edge cases;
--          call cl_metrics(beta := …, lambda_f := …, …) for other weights.
create or replace view cl_metrics_default as

with

final as (
    select * from cl_metrics()
)

select * from final
