-- nitr_pass_at_k(k := 1): the unbiased Pass@k of each probe from its repeated attempts.
--
-- Grain:   one row per run × probe in nitr_stability (at least one evaluated attempt).
-- Input:   nitr_stability (attempts n and n_pass c per probe; categories from nitr_attempts).
-- Formula (Chen et al. 2021, arXiv 2107.03374, eq. 1; "Pass" = NITR's category Pass, i.e.
--   functional AND structural oracle pass): pass_at_k = 1 − C(n − c, k) / C(n, k),
--   computed as 1 − Π_{i=0..k−1} (n − c − i) / (n − i), exact in floating point for small n.
--   The run-level Pass@k is the mean over its probes: avg(pass_at_k) group by run_id.
-- Edge cases: n < k → pass_at_k NULL (too few attempts to estimate it; flagged
--   'too_few_attempts'); n − c < k → 1 (every k-subset holds a Pass). k < 1 raises an error.
--
-- Example: select run_id, avg(pass_at_k) from nitr_pass_at_k(k := 3) group by run_id
create or replace macro nitr_pass_at_k(k := 1) as table

with

probes as (
    select * from nitr_stability
),

estimated as (
    select
        run_id,
        task_id,
        dimension,
        granularity,
        k as k,
        attempts,
        n_pass,
        case
            when k < 1 then error('nitr_pass_at_k: k must be at least 1, got ' || k)
            when attempts < k then null
            when attempts - n_pass < k then 1.0
            else 1.0 - list_product(
                [(attempts - n_pass - i) / (attempts - i) for i in range(0, k)]
            )
        end as pass_at_k,
        case when attempts < k then ['too_few_attempts'] else [] end as flags
    from probes
),

final as (
    select * from estimated
)

select * from final
