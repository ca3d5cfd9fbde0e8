-- nitr_by_dimension: NITR pass rate and S-rate per maintainability dimension (D1–D9).
--
-- Grain:   one row per run (configuration) × dimension (tasks.dimension, the probe's primary
--          dimension; probes without one form a NULL group).
-- Input:   nitr_probes (one row per run × probe; read its header for the categories).
-- Formula (NITR, arXiv 2603.27745; evoci's metric definitions "NITR"), over the evaluated probes of the group:
--   pass_rate = n_pass / evaluated         (§5.1 and §5.2, Table 3: "Case pass rate",
--                                           e.g. D6 = 2/46 = 4.3 %, micro = 123/230 = 53.5 %)
--   s_rate    = n_s / evaluated            (§5.3 RQ3: "64 of 483 evaluated pairs (13.3 %)": the
--                                           denominator is every evaluated (configuration,
--                                           probe) pair, all five categories including E)
--   *_low / *_high = 95 % Wilson score interval (wilson_low / wilson_high, z = 1.96).
--   n_pass, n_f, n_s, n_b, n_e count the categories of nitr_probes; to pool several
--   configurations as the paper does, sum the counts and divide (a mean of rates is not it).
-- Edge cases: unevaluated probes (category NULL, see nitr_probes) are not in any denominator
--   and are counted in `unevaluated`; no evaluated probe → rates and bounds NULL.
-- Rates are fractions in [0, 1], not percent.
create or replace view nitr_by_dimension as

with

probe_outcomes as (
    select * from nitr_probes
),

counted as (
    select
        run_id,
        dimension,
        count(*) as probes,
        count(*) filter (where evaluated) as evaluated,
        count(*) filter (where not evaluated) as unevaluated,
        count(*) filter (where category = 'Pass') as n_pass,
        count(*) filter (where category = 'F') as n_f,
        count(*) filter (where category = 'S') as n_s,
        count(*) filter (where category = 'B') as n_b,
        count(*) filter (where category = 'E') as n_e
    from probe_outcomes
    group by run_id, dimension
),

final as (
    select
        run_id,
        dimension,
        probes,
        evaluated,
        unevaluated,
        n_pass,
        n_f,
        n_s,
        n_b,
        n_e,
        case when evaluated > 0 then n_pass / evaluated end as pass_rate,
        wilson_low(n_pass, evaluated) as pass_rate_low,
        wilson_high(n_pass, evaluated) as pass_rate_high,
        case when evaluated > 0 then n_s / evaluated end as s_rate,
        wilson_low(n_s, evaluated) as s_rate_low,
        wilson_high(n_s, evaluated) as s_rate_high
    from counted
)

select * from final
