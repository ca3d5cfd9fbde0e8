-- cl_memory: what SWE-Bench-CL's semantic memory M(i) held at every memory stage.
--
-- Grain:   one row per run × sequence × memory stage i (1..N) × experience in M(i).
-- Source:  cl_experiences (written once per processed issue, at stage = its sequence_position j;
--          arXiv 2507.00014 §5: problem, solution summary, outcome, rationale) and cl_matrix (its stages).
-- Formula: M(i) = every experience of the run's sequence with stage ≤ i (processing issue j
--          adds its experience, making M(j) from M(j−1)); re-tests never add one.
-- Edge cases: M(0) is empty (memory off), so stage 0 has no rows. A sequence with no stored
--   experience (memory off, or nothing processed yet) has no rows. N = the largest
--   sequence_position of the sequence in the run; experiences are never listed past N.
create or replace view cl_memory as

with

stages as (
    -- the stages of cl_matrix's grid (1..N per run × sequence), so both views agree on N
    select distinct run_id, sequence_id, memory_stage
    from cl_matrix
    where memory_stage >= 1
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
