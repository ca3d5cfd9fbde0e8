-- cl_matrix: the SWE-Bench-CL performance matrix a(i, j), with NULL where nothing was evaluated.
--
-- Grain:   one row per run × sequence × memory stage i (0..N) × sequence position j (1..N):
--          the full (N+1) × N grid, so a cell that was not evaluated is a visible NULL row.
--          N = n_tasks = the largest sequence_position of the sequence in the run.
-- Indexing (see cl_attempts): a(i, j) = success on issue j when attempted with memory M(i),
--   M(i) = the memory after processing issues 1..i, M(0) = empty = memory off. Hence
--     a(0, j)          the memory-off (zero-shot) attempt                 cell 'memory_off'
--     a(j−1, j), j ≥ 2 the in-sequence attempt, the one that builds M(j)  cell 'in_sequence'
--                      (for j = 1 it is a(0, 1), labelled 'memory_off')
--     a(i, j), i ≥ j   re-test of a seen issue after processing issue i   cell 'retest'
--                      (the diagonal a(j, j) is the re-test right after j was processed:
--                      "success rate on task j after training on task i", arXiv 2507.00014 §7)
--     a(i, j), 1 ≤ i < j−1  issue not reached yet; no formula uses it    cell 'ahead'
--   This is the convention under which evoci's metric definitions read as intended: FT compares
--   the in-sequence attempt a(i, i+1) with the memory-off a(0, i+1); BWT and F compare the
--   final row a(N, ·) with the diagonal / earlier re-tests.
-- Formula (arXiv 2507.00014, §7, SR_{i,j} = p_pass / p_total; evoci's metric definitions "SWE-Bench-CL"):
--   a(i, j) = resolved_attempts / attempts over the attempts at (issue j, memory stage i).
-- Edge cases: no attempt at the cell, an invalid issue (see cl_attempts), or no issue at
--   position j → a NULL ("not evaluated"), never 0. Stages beyond N are outside the grid.
--   Positions are assumed unique within a run × sequence (the dataset's 1..N); two issues
--   sharing a position would each get a row for that cell.
create or replace view cl_matrix as

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
    select run_id, sequence_id, n_tasks, unnest(range(0, n_tasks + 1)) as memory_stage
    from sequences
),

grid as (
    select
        run_id,
        sequence_id,
        n_tasks,
        memory_stage,
        unnest(range(1, n_tasks + 1)) as sequence_position
    from stages
),

issues as (
    select run_id, sequence_id, sequence_position, task_id, status as task_status
    from tasks
    where protocol = 'swe-bench-cl'
        and sequence_id is not null
        and sequence_position is not null
),

cells as (
    select
        run_id,
        sequence_id,
        sequence_position,
        memory_stage,
        count(*) as attempts,
        count(*) filter (where resolved) as resolved_attempts,
        bool_and(valid) as valid
    from cl_attempts
    group by run_id, sequence_id, sequence_position, memory_stage
),

final as (
    select
        grid.run_id,
        grid.sequence_id,
        grid.n_tasks,
        grid.memory_stage,
        grid.sequence_position,
        issues.task_id,
        issues.task_status,
        case
            when grid.memory_stage = 0 then 'memory_off'
            when grid.memory_stage = grid.sequence_position - 1 then 'in_sequence'
            when grid.memory_stage >= grid.sequence_position then 'retest'
            else 'ahead'
        end as cell,
        coalesce(cells.attempts, 0) as attempts,
        coalesce(cells.resolved_attempts, 0) as resolved_attempts,
        case when cells.valid and cells.attempts > 0 then cells.resolved_attempts / cells.attempts end as a
    from grid
    left join issues using (run_id, sequence_id, sequence_position)
    left join cells using (run_id, sequence_id, sequence_position, memory_stage)
)

select * from final
