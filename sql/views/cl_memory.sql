-- cl_memory: what SWE-Bench-CL's semantic memory M(i) held at every memory stage.
--
-- Grain:   one row per run × sequence × memory stage i (1..N) × experience in M(i).
-- Source:  cl_experiences (written once per processed issue, at stage = its sequence_position j;
--          arXiv 2507.00014 §5: problem, solution summary, outcome, rationale) and tasks (for N).
-- Formula: M(i) = every experience of the run's sequence with stage ≤ i (processing issue j
--          adds its experience, making M(j) from M(j−1)); re-tests never add one.
-- Edge cases: M(0) is empty (memory off), so stage 0 has no rows. A sequence with no stored
--   experience (memory off, or nothing processed yet) has no rows. N = the largest
--   sequence_position of the sequence in the run; experiences are never listed past N.
create or replace view cl_memory as

with

sequences as (
    select run_id, sequence_id, max(sequence_position) as n_tasks
    from tasks
    where protocol = 'swe-bench-cl'
        and sequence_id is not null
        and sequence_position is not null
    group by run_id, sequence_id
),

stages as (
    select run_id, sequence_id, n_tasks, unnest(range(1, n_tasks + 1)) as memory_stage
    from sequences
),

final as (
    select
        stages.run_id,
        stages.sequence_id,
        stages.memory_stage,
        cl_experiences.stage as stored_at,
        cl_experiences.task_id,
        cl_experiences.outcome,
        cl_experiences.problem,
        cl_experiences.solution_summary,
        cl_experiences.rationale,
        cl_experiences.tokens,
        cl_experiences.embedding_model
    from stages
    join cl_experiences
        on cl_experiences.run_id = stages.run_id
        and cl_experiences.sequence_id = stages.sequence_id
        and cl_experiences.stage <= stages.memory_stage
)

select * from final
