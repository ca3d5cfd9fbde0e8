-- nitr_stability: how repeatable each probe's outcome is over several attempts (one configuration).
--
-- Grain:   one row per run × probe that has at least one evaluated attempt.
-- Input:   nitr_attempts (one row per run × probe × attempt, with its category).
-- Formula (evoci's; NITR reports one attempt per pair, so repeated attempts are evoci's addition):
--   attempts      = evaluated attempts n; n_pass, n_f, n_s, n_b, n_e = their categories
--   pass_at_1     = n_pass / n (the unbiased Pass@1 estimate, Chen et al. 2021, arXiv 2107.03374)
--   modal_category = the most frequent category (ties: Pass, S, F, B, E in that order)
--   stability     = share of attempts whose category is the modal one (1 = every attempt agrees)
--   all_agree     = stability = 1
-- Edge cases: unevaluated attempts (category NULL) are left out and counted in `unevaluated`;
--   a probe with no evaluated attempt has no row. One attempt → stability 1.
create or replace view nitr_stability as

with

evaluated as (
    select * from nitr_attempts where evaluated
),

unevaluated as (
    select run_id, task_id, count(*) filter (where not evaluated and attempt is not null) as unevaluated
    from nitr_attempts
    group by run_id, task_id
),

per_category as (
    select run_id, task_id, category, count(*) as n
    from evaluated
    group by run_id, task_id, category
),

modal as (
    select run_id, task_id, category as modal_category, n as modal_n
    from per_category
    qualify row_number() over (
        partition by run_id, task_id
        order by n desc, list_position(['Pass', 'S', 'F', 'B', 'E'], category)
    ) = 1
),

counted as (
    select
        run_id,
        task_id,
        any_value(dimension) as dimension,
        any_value(granularity) as granularity,
        count(*) as attempts,
        count(*) filter (where category = 'Pass') as n_pass,
        count(*) filter (where category = 'F') as n_f,
        count(*) filter (where category = 'S') as n_s,
        count(*) filter (where category = 'B') as n_b,
        count(*) filter (where category = 'E') as n_e
    from evaluated
    group by run_id, task_id
),

final as (
    select
        counted.*,
        coalesce(unevaluated.unevaluated, 0) as unevaluated,
        n_pass / attempts as pass_at_1,
        modal.modal_category,
        modal.modal_n / attempts as stability,
        modal.modal_n = attempts as all_agree
    from counted
    join modal using (run_id, task_id)
    left join unevaluated using (run_id, task_id)
)

select * from final
