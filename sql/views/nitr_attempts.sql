-- nitr_attempts: the NITR outcome category of each attempt at each probe in each configuration (run).
--
-- Grain:   one row per run × probe × attempt (every `tasks` row with protocol 'nitr'; a probe
--          with no iterations row at all gets one row with attempt NULL).
-- Inputs:  targets (role 'functional' = hidden functional tests, 'structural' = the hidden
--          structural / maintainability oracle), iterations = steps k (1..n) of each attempt,
--          test_results. An attempt is judged at its final step: the largest iteration with a
--          row in that attempt. A multi-step probe's earlier steps only shape the code the last
--          one sees (their rows may be 'not_graded', or graded as a diagnostic).
--          A target passes only with outcome 'passed'; no result row (or 'missing') = not passed.
-- Formula (NITR, arXiv 2603.27745, §5.3 RQ3 and Figure 6; evoci's metric definitions "NITR"):
--   functional_pass = every functional target passed at the final step
--   structural_pass = every structural target passed at the final step
--   category = 'E'    final step status 'build_error' (build error; nothing else judged)
--              'Pass' functional_pass and structural_pass
--              'F'    functional fails, structural passes
--              'S'    functional passes, structural fails (test-passing but structurally wrong)
--              'B'    both fail
--   This is the one place the category rule lives: nitr_probes (the last attempt) and
--   nitr_stability / nitr_pass_at_k (all attempts) read it.
-- Edge cases: category NULL (evaluated = false, left out of every rate's denominator and
--   counted as unevaluated) when the probe has no iterations row (never ran, or every step
--   was lost to infrastructure), when tasks.status is 'infra_error' (schema: score NULL in
--   every view) or 'environment_error' (the preflight found the sandbox cannot build the probe), 'invalid' or 'input_error', or when it has no functional or no structural
--   target (the outcome cannot be decided). For 'E', functional_pass and structural_pass are
--   NULL. The step count of a multi-step probe is not in the schema, so an attempt that stopped
--   before its last TASK is judged at the last step it reached (column `steps` shows how many).
-- flags: any of 'empty_functional', 'empty_structural', 'task_invalid', 'task_input_error',
--   'infra_error', 'environment_error', 'not_evaluated', 'outcomes_missing', 'unfinished' (tasks.status 'running').
create or replace view nitr_attempts as

with

probes as (
    select run_id, task_id, dimension, granularity, status as task_status
    from tasks
    where protocol = 'nitr'
),

target_counts as (
    select
        run_id,
        task_id,
        count(*) filter (where role = 'functional') as n_functional,
        count(*) filter (where role = 'structural') as n_structural
    from targets
    group by run_id, task_id
),

steps as (
    select
        iterations.run_id,
        iterations.task_id,
        iterations.attempt,
        count(distinct iterations.iteration) as steps,
        max(iterations.iteration) as final_step
    from iterations
    join probes using (run_id, task_id)
    group by iterations.run_id, iterations.task_id, iterations.attempt
),

final_steps as (
    select iterations.run_id, iterations.task_id, iterations.iteration, iterations.attempt, iterations.status
    from iterations
    join probes using (run_id, task_id)
    qualify row_number() over (
        partition by iterations.run_id, iterations.task_id, iterations.attempt
        order by iterations.iteration desc
    ) = 1
),

outcomes as (
    select
        final_steps.run_id,
        final_steps.task_id,
        final_steps.attempt,
        count(*) filter (
            where targets.role = 'functional' and test_results.outcome = 'passed'
        ) as functional_passed,
        count(*) filter (
            where targets.role = 'structural' and test_results.outcome = 'passed'
        ) as structural_passed,
        count(*) filter (
            where test_results.outcome is null or test_results.outcome = 'missing'
        ) as outcomes_missing
    from final_steps
    join targets
        on targets.run_id = final_steps.run_id
        and targets.task_id = final_steps.task_id
        and targets.role in ('functional', 'structural')
    left join test_results
        on test_results.run_id = final_steps.run_id
        and test_results.task_id = final_steps.task_id
        and test_results.iteration = final_steps.iteration
        and test_results.attempt = final_steps.attempt
        and test_results.test_id = targets.test_id
    group by final_steps.run_id, final_steps.task_id, final_steps.attempt
),

joined as (
    select
        probes.run_id,
        probes.task_id,
        steps.attempt,
        probes.dimension,
        probes.granularity,
        probes.task_status,
        coalesce(steps.steps, 0) as steps,
        steps.final_step,
        final_steps.status as final_status,
        coalesce(target_counts.n_functional, 0) as n_functional,
        coalesce(outcomes.functional_passed, 0) as functional_passed,
        coalesce(target_counts.n_structural, 0) as n_structural,
        coalesce(outcomes.structural_passed, 0) as structural_passed,
        coalesce(outcomes.outcomes_missing, 0) as outcomes_missing
    from probes
    left join target_counts using (run_id, task_id)
    left join steps using (run_id, task_id)
    left join final_steps using (run_id, task_id, attempt)
    left join outcomes using (run_id, task_id, attempt)
),

judged as (
    select
        *,
        final_status is not null
            and n_functional > 0
            and n_structural > 0
            and task_status not in ('invalid', 'input_error', 'infra_error', 'environment_error') as evaluated
    from joined
),

passes as (
    select
        *,
        case
            when evaluated and final_status <> 'build_error' then functional_passed = n_functional
        end as functional_pass,
        case
            when evaluated and final_status <> 'build_error' then structural_passed = n_structural
        end as structural_pass
    from judged
),

final as (
    select
        run_id,
        task_id,
        attempt,
        dimension,
        granularity,
        task_status,
        steps,
        final_step,
        final_status,
        n_functional,
        functional_passed,
        n_structural,
        structural_passed,
        functional_pass,
        structural_pass,
        case
            when not evaluated then null
            when final_status = 'build_error' then 'E'
            when functional_pass and structural_pass then 'Pass'
            when structural_pass then 'F'
            when functional_pass then 'S'
            else 'B'
        end as category,
        evaluated,
        [
            flag for flag in [
                case when n_functional = 0 then 'empty_functional' end,
                case when n_structural = 0 then 'empty_structural' end,
                case when task_status in ('invalid', 'input_error') then 'task_' || task_status end,
                case when task_status in ('infra_error', 'environment_error') then task_status end,
                case when final_status is null then 'not_evaluated' end,
                case when final_status <> 'build_error' and outcomes_missing > 0 then 'outcomes_missing' end,
                case when task_status = 'running' then 'unfinished' end
            ]
            if flag is not null
        ] as flags
    from passes
)

select * from final
