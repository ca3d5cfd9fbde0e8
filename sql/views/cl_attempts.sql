-- cl_attempts: every SWE-Bench-CL attempt and whether it resolved its issue.
--
-- Grain:   one row per run × task (issue) × memory stage × attempt that has an iterations row.
-- Indexing (shared by every cl_* view):
--   sequence_position j = tasks.sequence_position, 1-based place of the issue in its sequence.
--   memory_stage i      = iterations.iteration: the attempt used memory M(i), the memory after
--                         the first i issues of the sequence were processed; M(0) is empty, so
--                         i = 0 is the memory-off attempt. Processing issue j means attempting it
--                         with M(j−1) (stored at iteration j−1) and then storing the experience,
--                         which gives M(j). Re-tests of issue j after processing issue i ≥ j
--                         are stored at iteration i.
-- Formula (evoci's metric definitions "SWE-Bench-CL"; arXiv 2507.00014, §7 "Evaluation Metrics", SR_{i,j}):
--   resolved = the issue has ≥ 1 F2P target and every F2P and every P2P target has outcome
--              'passed' in test_results at this (iteration, attempt). A target without a
--              result row (or 'missing') has not passed.
-- Edge cases:
--   * invalid issue (valid = false; resolved NULL): no F2P target, or tasks.status 'invalid',
--     'input_error' or 'infra_error' (schema: an infra_error task's score is NULL in every view).
--   * an attempt lost to infrastructure has no iterations row, so it is not here at all:
--     never scored as a failure.
--   * an attempt whose agent failed (status 'agent_error', 'timeout', 'no_prediction') is
--     here and is judged by its tests (normally unresolved).
--   * issues without sequence_id or sequence_position cannot be placed and are left out.
-- wall_s is iterations.wall_s (the whole attempt, harness included), the time TUE uses.
create or replace view cl_attempts as

with

issues as (
    select run_id, task_id, sequence_id, sequence_position, status as task_status
    from tasks
    where protocol = 'swe-bench-cl'
        and sequence_id is not null
        and sequence_position is not null
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

attempts as (
    select
        iterations.run_id,
        iterations.task_id,
        iterations.iteration as memory_stage,
        iterations.attempt,
        iterations.status,
        iterations.wall_s
    from iterations
    join issues using (run_id, task_id)
),

passes as (
    select
        attempts.run_id,
        attempts.task_id,
        attempts.memory_stage,
        attempts.attempt,
        count(*) filter (where test_results.outcome = 'passed') as targets_passed
    from attempts
    join targets
        on targets.run_id = attempts.run_id
        and targets.task_id = attempts.task_id
        and targets.role in ('F2P', 'P2P')
    left join test_results
        on test_results.run_id = attempts.run_id
        and test_results.task_id = attempts.task_id
        and test_results.iteration = attempts.memory_stage
        and test_results.attempt = attempts.attempt
        and test_results.test_id = targets.test_id
    group by attempts.run_id, attempts.task_id, attempts.memory_stage, attempts.attempt
),

final as (
    select
        attempts.run_id,
        issues.sequence_id,
        issues.sequence_position,
        attempts.task_id,
        attempts.memory_stage,
        attempts.attempt,
        attempts.status,
        attempts.wall_s,
        issues.task_status,
        coalesce(target_counts.n_f2p, 0) > 0
            and issues.task_status not in ('invalid', 'input_error', 'infra_error') as valid,
        case
            when coalesce(target_counts.n_f2p, 0) > 0
                and issues.task_status not in ('invalid', 'input_error', 'infra_error')
                then coalesce(passes.targets_passed, 0) = target_counts.n_f2p + target_counts.n_p2p
        end as resolved
    from attempts
    join issues using (run_id, task_id)
    left join target_counts using (run_id, task_id)
    left join passes using (run_id, task_id, memory_stage, attempt)
)

select * from final
