-- swe_evo_failure_modes: how a run's unresolved SWE-EVO instances failed, by judge label.
--
-- Grain:   one row per run × judge model × label (only labels that occur; NULL label = the
--          judge gave no valid one).
-- Inputs:  failure_labels (one LLM-judge label per unresolved instance with a prediction).
-- Formula (SWE-EVO, arXiv 2512.18470, §5 and Appendix L, Figure 5): share = instances with this
--          label / instances the judge labelled for that run and judge model. The labels are
--          qualitative diagnostics, not execution-based scores.
-- Edge cases: instances the judge could not label (status 'invalid_output' / 'model_error')
--   form their own row with label NULL and are in the denominator, so the shares add up to 1;
--   an instance without a prediction is never judged (it is flagged 'missing_prediction' in
--   swe_evo_instances instead).
create or replace view swe_evo_failure_modes as

with

labels as (
    select run_id, judge_model, label
    from failure_labels
),

counted as (
    select run_id, judge_model, label, count(*) as instances
    from labels
    group by run_id, judge_model, label
),

final as (
    select
        run_id,
        judge_model,
        label,
        instances,
        instances / sum(instances) over (partition by run_id, judge_model) as share
    from counted
)

select * from final
