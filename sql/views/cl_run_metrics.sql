-- cl_run_metrics(beta, lambda_f, lambda_ft, lambda_bwt, lambda_aulc): SWE-Bench-CL per run.
--
-- Grain:   table macro; one row per run (over its sequences).
-- Formula: every metric of cl_metrics(...) (same parameters, same defaults) averaged over the
--          run's sequences, each sequence weighing 1 (a macro-average: long and short
--          sequences count alike). CL-F1 / CL-Fβ / CL-Score are the means of the per-sequence
--          values, not recomputed from mean P and S. sequences, n_tasks and cells_missing are
--          sums. Source: arXiv 2507.00014, §7 defines the metrics per sequence; the average over
--          sequences is evoci's summary.
-- The parameter columns are read qualified (per_sequence.beta): a bare `beta` here would
-- be the macro's argument, not the column.
-- Edge cases: a sequence whose metric is NULL (undefined, e.g. N = 1 for F) drops out of that
--          metric's mean; a metric NULL for every sequence is NULL.
-- Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--   included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons plus
--   'dataset_error' and 'not_started') and complete = every expected task was scored. A run
--   with complete = false is partial: never publish its rates as the whole dataset's.
create or replace macro cl_run_metrics(
    beta := 1.0,
    lambda_f := 1.0,
    lambda_ft := 1.0,
    lambda_bwt := 1.0,
    lambda_aulc := 1.0
) as table

with

per_sequence as (
    select *
    from cl_metrics(
        beta := beta,
        lambda_f := lambda_f,
        lambda_ft := lambda_ft,
        lambda_bwt := lambda_bwt,
        lambda_aulc := lambda_aulc
    )
),

per_run as (
    select
        run_id,
        count(*) as sequences,
        sum(n_tasks) as n_tasks,
        sum(cells_missing) as cells_missing,
        avg(acc) as acc,
        avg(forgetting) as forgetting,
        avg(ft) as ft,
        avg(bwt) as bwt,
        avg(aulc) as aulc,
        avg(tue) as tue,
        avg(cl_p) as cl_p,
        avg(cl_s) as cl_s,
        avg(cl_f1) as cl_f1,
        avg(cl_fbeta) as cl_fbeta,
        avg(cl_score) as cl_score,
        any_value(per_sequence.beta) as beta,
        any_value(per_sequence.lambda_f) as lambda_f,
        any_value(per_sequence.lambda_ft) as lambda_ft,
        any_value(per_sequence.lambda_bwt) as lambda_bwt,
        any_value(per_sequence.lambda_aulc) as lambda_aulc
    from per_sequence
    group by run_id
),

final as (
    select
        per_run.*,
        done.tasks_expected,
        done.tasks_unscored,
        done.unscored_reasons,
        done.complete
    from per_run
    left join run_completeness as done using (run_id)
)

select * from final
