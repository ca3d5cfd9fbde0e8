-- swe_evo_instances: how one SWE-EVO instance scored in one run.
--
-- Grain:   one row per run × instance (every `tasks` row with protocol 'swe-evo'; none is dropped).
-- Inputs:  targets (role 'F2P' / 'P2P'); iterations and test_results at iteration 1 = the
--          agent's prediction (iteration 0, the base, is not read). If a prediction has several
--          attempts, the last one is graded. Official outcome mapping: a test passes with outcome
--          'passed' or 'xfailed' (SWE-bench's PASSED / XFAIL); 'failed', 'error', 'xpassed' and a
--          target without a result row (or with outcome 'missing') have not passed.
--          'skipped' is neither (SWE-bench's SKIPPED): a skipped target leaves both the passed
--          count and the denominator. Denominators are therefore n_f2p − f2p_skipped and
--          n_p2p − p2p_skipped; where that is 0 the set is decided below, never 0/0.
-- Formula (SWE-EVO, arXiv 2512.18470, §3.2 "Evaluation Metrics", Eq. 1):
--          resolved       = every F2P and every P2P test passes
--          fix_rate       = |F2P passing| / |F2P|  if every P2P test passes, else 0   (strict)
--          f2p_pass_rate  = |F2P passing| / |F2P|   (relaxed diagnostic, Appendix J)
--          p2p_pass_rate  = |P2P passing| / |P2P|   (relaxed diagnostic, Appendix J)
-- Edge cases (evoci's metric definitions "SWE-EVO" and "Mistakes in the official harnesses"):
--   * invalid = no F2P target (empty F2P: cannot be resolved, never a division by zero) or
--     tasks.status 'invalid' / 'input_error'. Scores are NULL; swe_evo_runs counts these
--     instances separately and leaves them out of its denominators.
--   * missing prediction = no iteration-1 row, or its status is 'no_prediction'. Scores 0
--     (resolved false), flagged 'missing_prediction', never dropped.
--   * tasks.status 'infra_error' (retries exhausted): scores 0 like a crashed prediction,
--     flagged 'infra_error', kept in every denominator (evoci's metric definitions: "a missing or crashed
--     prediction counts as 0"). Filter on `infra_error` to see how much this weighs.
--   * tasks.status 'environment_error' (the test environment could not be built, or was not proven
--     on the clean base + test_patch before any agent was graded): never the agent's outcome; not
--     graded, scored 0 like infra_error, flagged 'environment_error'; task_scored lists it as
--     unscored, so run_completeness calls the run partial until a re-run proves the environment.
--   * patch_applied = false: the prediction did not apply to the clean base, so nothing of it
--     was tested; scores 0, flagged 'patch_not_applied' (as SWE-bench grading does).
--     patch_applied NULL (not recorded) is graded from the tests.
--   * empty P2P: "every P2P passes" holds vacuously; p2p_pass_rate is NULL (undefined).
--   * every F2P target skipped (the official harness divides 0/0 and calls it resolved): nothing
--     of the release was shown to work, so resolved = false, fix_rate = 0, f2p_pass_rate NULL,
--     flagged 'skipped_targets'. Every P2P target skipped: "every P2P passes" holds vacuously,
--     p2p_pass_rate NULL. Any skipped target is flagged 'skipped_targets' (a skip can come
--     from the agent's code: read them).
-- Columns: f2p_passed / p2p_passed are the counts observed on the graded attempt (0 when
--   there is none); the rates are fractions in [0, 1]. `graded` = the test outcomes decided
--   the scores (valid, has a prediction, no infra error, patch not known to have failed).
-- flags: any of 'empty_f2p', 'task_invalid', 'task_input_error', 'missing_prediction',
--   'infra_error', 'environment_error', 'patch_not_applied', 'agent_error', 'timeout', 'outcomes_missing',
--   'skipped_targets', 'unfinished' (tasks.status still 'running', or 'interrupted' by a signal).
create or replace view swe_evo_instances as

with

instances as (
    select run_id, task_id, repo, status as task_status
    from tasks
    where protocol = 'swe-evo'
),

target_counts as (
    select
        run_id,
        task_id,
        count(*) filter (where role = 'F2P') as n_f2p,
        count(*) filter (where role = 'P2P') as n_p2p
    from targets
    group by run_id, task_id
),

predictions as (
    select run_id, task_id, attempt, status as prediction_status, patch_applied
    from iterations
    where iteration = 1
    qualify row_number() over (partition by run_id, task_id order by attempt desc) = 1
),

outcomes as (
    select
        predictions.run_id,
        predictions.task_id,
        count(*) filter (where targets.role = 'F2P' and test_results.outcome in ('passed', 'xfailed')) as f2p_passed,
        count(*) filter (where targets.role = 'P2P' and test_results.outcome in ('passed', 'xfailed')) as p2p_passed,
        count(*) filter (where targets.role = 'F2P' and test_results.outcome = 'skipped') as f2p_skipped,
        count(*) filter (where targets.role = 'P2P' and test_results.outcome = 'skipped') as p2p_skipped,
        count(*) filter (
            where test_results.outcome is null or test_results.outcome = 'missing'
        ) as outcomes_missing
    from predictions
    join targets
        on targets.run_id = predictions.run_id
        and targets.task_id = predictions.task_id
        and targets.role in ('F2P', 'P2P')
    left join test_results
        on test_results.run_id = predictions.run_id
        and test_results.task_id = predictions.task_id
        and test_results.iteration = 1
        and test_results.attempt = predictions.attempt
        and test_results.test_id = targets.test_id
    group by predictions.run_id, predictions.task_id
),

joined as (
    select
        instances.run_id,
        instances.task_id,
        instances.repo,
        instances.task_status,
        coalesce(target_counts.n_f2p, 0) as n_f2p,
        coalesce(target_counts.n_p2p, 0) as n_p2p,
        coalesce(outcomes.f2p_passed, 0) as f2p_passed,
        coalesce(outcomes.p2p_passed, 0) as p2p_passed,
        coalesce(outcomes.outcomes_missing, 0) as outcomes_missing,
        coalesce(target_counts.n_f2p, 0) - coalesce(outcomes.f2p_skipped, 0) as f2p_counted,
        coalesce(target_counts.n_p2p, 0) - coalesce(outcomes.p2p_skipped, 0) as p2p_counted,
        coalesce(outcomes.f2p_skipped, 0) + coalesce(outcomes.p2p_skipped, 0) as skipped_targets,
        predictions.prediction_status,
        coalesce(predictions.prediction_status <> 'no_prediction', false) as has_prediction,
        case
            when predictions.prediction_status <> 'no_prediction' then predictions.patch_applied
        end as patch_applied,
        instances.task_status = 'infra_error' as infra_error
    from instances
    left join target_counts using (run_id, task_id)
    left join predictions using (run_id, task_id)
    left join outcomes using (run_id, task_id)
),

classified as (
    select
        *,
        n_f2p = 0 or task_status in ('invalid', 'input_error') as invalid,
        n_f2p > 0
            and task_status not in ('invalid', 'input_error', 'infra_error', 'environment_error')
            and has_prediction
            and patch_applied is distinct from false as graded
    from joined
),

final as (
    select
        run_id,
        task_id,
        repo,
        task_status,
        n_f2p,
        n_p2p,
        f2p_passed,
        p2p_passed,
        has_prediction,
        prediction_status,
        patch_applied,
        invalid,
        infra_error,
        graded,
        case
            when invalid then null
            when graded then f2p_counted > 0 and f2p_passed = f2p_counted and p2p_passed = p2p_counted
            else false
        end as resolved,
        case
            when invalid then null
            when graded and f2p_counted > 0 and p2p_passed = p2p_counted then f2p_passed / f2p_counted
            else 0.0
        end as fix_rate,
        case
            when invalid then null
            when graded and f2p_counted = 0 then null
            when graded then f2p_passed / f2p_counted
            else 0.0
        end as f2p_pass_rate,
        case
            when invalid or n_p2p = 0 then null
            when graded and p2p_counted = 0 then null
            when graded then p2p_passed / p2p_counted
            else 0.0
        end as p2p_pass_rate,
        [
            flag for flag in [
                case when n_f2p = 0 then 'empty_f2p' end,
                case when task_status in ('invalid', 'input_error') then 'task_' || task_status end,
                case when not has_prediction and task_status <> 'environment_error' then 'missing_prediction' end,
                case when infra_error then 'infra_error' end,
                case when task_status = 'environment_error' then 'environment_error' end,
                case when patch_applied = false then 'patch_not_applied' end,
                case when prediction_status in ('agent_error', 'timeout') then prediction_status end,
                case when has_prediction and outcomes_missing > 0 then 'outcomes_missing' end,
                case when has_prediction and skipped_targets > 0 then 'skipped_targets' end,
                case when task_status in ('running', 'interrupted') then 'unfinished' end
            ]
            if flag is not null
        ] as flags
    from classified
)

select * from final
