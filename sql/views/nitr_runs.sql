-- nitr_runs: the NITR outcome mix of each configuration (run): pass rate and S-rate.
--
-- Grain:   one row per run (runs.protocol = 'nitr', or any run with a nitr probe).
-- Input:   nitr_probes (one row per run × probe; read its header for the categories).
-- Formula (NITR, arXiv 2603.27745; evoci's metric definitions "NITR"), over the run's evaluated probes:
--   pass_rate = n_pass / evaluated     (§5.1 RQ1, Table 3 "Rate": e.g. 12/21 = 57 %)
--   s_rate    = n_s / evaluated        (§5.3 RQ3: "64 of 483 evaluated pairs (13.3 %)": the
--                                       denominator is every evaluated pair, all five
--                                       categories including Pass and E)
--   f_rate, b_rate, e_rate = n_f, n_b, n_e / evaluated (§5.3: "31.5 % are functional
--                                       failures … 10.4 % joint failures … 8.7 % build errors")
--   s_share_of_functional_passes = n_s / (n_s + n_pass): of the solutions the functional tests
--                                       accept, the share the structural oracle rejects
--                                       (evoci's reading of RQ3; not a number the paper prints)
--   *_low / *_high = 95 % Wilson score interval (wilson_low / wilson_high, z = 1.96).
-- To pool several configurations as the paper does, sum the counts and divide.
-- Edge cases: unevaluated probes (category NULL, see nitr_probes) are not in any denominator
--   and are counted in `unevaluated`; no evaluated probe → every rate NULL; no S or Pass
--   → s_share_of_functional_passes NULL. Rates are fractions in [0, 1], not percent.
-- Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--   included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons plus
--   'dataset_error' and 'not_started') and complete = every expected task was scored. A run
--   with complete = false is partial: never publish its rates as the whole dataset's.
create or replace view nitr_runs as

with

probe_outcomes as (
    select * from nitr_probes
),

nitr_run_ids as (
    select run_id from runs where protocol = 'nitr'
    union
    select run_id from probe_outcomes
),

per_run as (
    select
        run_id,
        count(*) as probes,
        count(*) filter (where evaluated) as evaluated,
        count(*) filter (where not evaluated) as unevaluated,
        count(*) filter (where category = 'Pass') as n_pass,
        count(*) filter (where category = 'F') as n_f,
        count(*) filter (where category = 'S') as n_s,
        count(*) filter (where category = 'B') as n_b,
        count(*) filter (where category = 'E') as n_e
    from probe_outcomes
    group by run_id
),

counted as (
    select
        nitr_run_ids.run_id,
        coalesce(per_run.probes, 0) as probes,
        coalesce(per_run.evaluated, 0) as evaluated,
        coalesce(per_run.unevaluated, 0) as unevaluated,
        coalesce(per_run.n_pass, 0) as n_pass,
        coalesce(per_run.n_f, 0) as n_f,
        coalesce(per_run.n_s, 0) as n_s,
        coalesce(per_run.n_b, 0) as n_b,
        coalesce(per_run.n_e, 0) as n_e
    from nitr_run_ids
    left join per_run using (run_id)
),

final as (
    select
        run_id,
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
        wilson_high(n_s, evaluated) as s_rate_high,
        case when evaluated > 0 then n_f / evaluated end as f_rate,
        case when evaluated > 0 then n_b / evaluated end as b_rate,
        case when evaluated > 0 then n_e / evaluated end as e_rate,
        case when n_s + n_pass > 0 then n_s / (n_s + n_pass) end as s_share_of_functional_passes,
        done.tasks_expected,
        done.tasks_unscored,
        done.unscored_reasons,
        done.complete
    from counted
    left join run_completeness as done using (run_id)
)

select * from final
