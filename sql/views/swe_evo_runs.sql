-- swe_evo_runs: the SWE-EVO headline rates of one run, with 95 % intervals.
--
-- Grain:   one row per run (runs.protocol = 'swe-evo', or any run with a swe-evo task).
-- Input:   swe_evo_instances (one row per run × instance; read its header for the scoring).
-- Denominator of every rate: the run's VALID instances (valid_instances). Every valid
--   instance stays in it: a missing prediction, an infra error or a patch that did not apply
--   counts as 0 (evoci's metric definitions: run-level rates average over all instances; the official harness
--   dropped instances without a prediction, inflating every rate). Invalid instances (empty
--   F2P, tasks.status 'invalid' / 'input_error') cannot be resolved: they are left out of
--   the denominators and counted in invalid_instances. The counts missing_predictions,
--   infra_errors, environment_errors, predictions, patches_applied and resolved_instances are over
--   valid instances. environment_errors: instances whose test environment could not be built or
--   proven on the clean base (no agent was graded on them, so they are not missing predictions);
--   they count 0 here and make the run partial (run_completeness): fix the spec and re-run.
-- Formulas (SWE-EVO, arXiv 2512.18470, §3.2 "Evaluation Metrics", Eq. 1; §4.2 for the intervals):
--   resolved_rate     = resolved_instances / valid_instances
--   patch_apply_rate  = patches_applied / valid_instances. The paper's "share of generated
--                       patches that apply" counts missing patches as not applied here (same
--                       rule as every other rate); patches_applied / predictions is the share
--                       among the patches that exist.
--   fix_rate          = mean over valid instances of the instance Fix Rate (strict)
--   f2p_pass_rate     = mean over valid instances of |F2P passing| / |F2P|  (Appendix J)
--   p2p_pass_rate     = mean over valid instances with a P2P set of |P2P passing| / |P2P|
--   *_low / *_high    = 95 % Wilson score interval (wilson_low / wilson_high, z = 1.96) for
--                       the two proportions (resolved, patch apply): each instance is one
--                       Bernoulli trial. Fix Rate is a mean of fractions, not a count of
--                       successes, so Wilson does not apply: fix_rate_low / fix_rate_high are
--                       the normal approximation mean ± 1.96·s/√n (s = sample standard
--                       deviation), clipped to [0, 1]; rough for small n or rates near 0.
-- Edge cases: no valid instance → every rate and bound NULL (never a division by zero);
--   fewer than 2 valid instances → fix_rate interval NULL (no sample deviation).
-- Rates are fractions in [0, 1], not percent.
-- Completeness (run_completeness.sql): tasks_expected (the dataset's tasks, bad lines
--   included), tasks_unscored, unscored_reasons = {reason: count} (the task views' reasons plus
--   'dataset_error' and 'not_started') and complete = every expected task was scored. A run
--   with complete = false is partial: never publish its rates as the whole dataset's.
create or replace view swe_evo_runs as

with

instances as (
    select * from swe_evo_instances
),

evo_runs as (
    select run_id from runs where protocol = 'swe-evo'
    union
    select run_id from instances
),

per_run as (
    select
        run_id,
        count(*) as instances,
        count(*) filter (where invalid) as invalid_instances,
        count(*) filter (where not invalid) as valid_instances,
        count(*) filter (
            where not invalid and not has_prediction and task_status <> 'environment_error'
        ) as missing_predictions,
        count(*) filter (where not invalid and infra_error) as infra_errors,
        count(*) filter (where not invalid and task_status = 'environment_error') as environment_errors,
        count(*) filter (where not invalid and has_prediction) as predictions,
        count(*) filter (where not invalid and patch_applied) as patches_applied,
        count(*) filter (where resolved) as resolved_instances,
        avg(fix_rate) as fix_rate,
        stddev_samp(fix_rate) as fix_rate_sd,
        avg(f2p_pass_rate) as f2p_pass_rate,
        avg(p2p_pass_rate) as p2p_pass_rate
    from instances
    group by run_id
),

counted as (
    select
        evo_runs.run_id,
        coalesce(per_run.instances, 0) as instances,
        coalesce(per_run.valid_instances, 0) as valid_instances,
        coalesce(per_run.invalid_instances, 0) as invalid_instances,
        coalesce(per_run.missing_predictions, 0) as missing_predictions,
        coalesce(per_run.infra_errors, 0) as infra_errors,
        coalesce(per_run.environment_errors, 0) as environment_errors,
        coalesce(per_run.predictions, 0) as predictions,
        coalesce(per_run.patches_applied, 0) as patches_applied,
        coalesce(per_run.resolved_instances, 0) as resolved_instances,
        per_run.fix_rate,
        per_run.fix_rate_sd,
        per_run.f2p_pass_rate,
        per_run.p2p_pass_rate
    from evo_runs
    left join per_run using (run_id)
),

final as (
    select
        run_id,
        instances,
        valid_instances,
        invalid_instances,
        missing_predictions,
        infra_errors,
        environment_errors,
        predictions,
        resolved_instances,
        case when valid_instances > 0 then resolved_instances / valid_instances end as resolved_rate,
        wilson_low(resolved_instances, valid_instances) as resolved_rate_low,
        wilson_high(resolved_instances, valid_instances) as resolved_rate_high,
        patches_applied,
        case when valid_instances > 0 then patches_applied / valid_instances end as patch_apply_rate,
        wilson_low(patches_applied, valid_instances) as patch_apply_rate_low,
        wilson_high(patches_applied, valid_instances) as patch_apply_rate_high,
        fix_rate,
        case
            when valid_instances >= 2
                then greatest(0.0, fix_rate - 1.96 * fix_rate_sd / sqrt(valid_instances))
        end as fix_rate_low,
        case
            when valid_instances >= 2
                then least(1.0, fix_rate + 1.96 * fix_rate_sd / sqrt(valid_instances))
        end as fix_rate_high,
        f2p_pass_rate,
        p2p_pass_rate,
        done.tasks_expected,
        done.tasks_unscored,
        done.unscored_reasons,
        done.complete
    from counted
    left join run_completeness as done using (run_id)
)

select * from final
