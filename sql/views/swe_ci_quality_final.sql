-- swe_ci_quality_final: the agent's final code against the oracle, per task (win / loss / tie).
--
-- Grain: one row per run × task of `swe_ci_tasks` (every SWE-CI task, measured or not).
--
-- Columns:
--   solved            from `swe_ci_tasks` (NULL when the task is not scored)
--   final_iteration   the task's last iteration (its final code c_last); NULL before iteration 1
--   mi, oracle_mi, pylint_score, oracle_pylint_score, changed_lines, oracle_changed_lines
--                     of c_last and c* (from `swe_ci_quality`)
--   mi_outcome        'win' when mi > oracle_mi, 'loss' when mi < oracle_mi, 'tie' when equal,
--   pylint_outcome    the same on the Pylint score; both compared at 2 decimals (the precision
--                     pylint and radon report), so float noise is never a win
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.4 Observation 5, Figure 8): the agent's code is
-- compared with the human oracle's on MI and on Pylint score; the paper reports it on solved
-- tasks only (see `swe_ci_quality_runs`).
--
-- Edge cases: an outcome is NULL when the final code or the oracle has no measurement (quality
-- off for the run, no parsable code, a pylint error); unscored tasks keep solved NULL.

create or replace view swe_ci_quality_final as

with

final_code as (
    select q.*
    from swe_ci_quality as q
    join swe_ci_tasks as t
        on q.run_id = t.run_id and q.task_id = t.task_id and q.iteration = t.last_iteration
    where t.last_iteration >= 1
),

compared as (
    select
        t.run_id,
        t.task_id,
        t.solved,
        f.iteration as final_iteration,
        f.mi,
        f.oracle_mi,
        f.pylint_score,
        f.oracle_pylint_score,
        f.changed_lines,
        f.oracle_changed_lines,
        round(f.mi, 2) - round(f.oracle_mi, 2) as mi_diff,
        round(f.pylint_score, 2) - round(f.oracle_pylint_score, 2) as pylint_diff
    from swe_ci_tasks as t
    left join final_code as f using (run_id, task_id)
),

final as (
    select
        run_id,
        task_id,
        solved,
        final_iteration,
        mi,
        oracle_mi,
        pylint_score,
        oracle_pylint_score,
        changed_lines,
        oracle_changed_lines,
        case when mi_diff > 0 then 'win' when mi_diff < 0 then 'loss' when mi_diff = 0 then 'tie' end
            as mi_outcome,
        case when pylint_diff > 0 then 'win' when pylint_diff < 0 then 'loss' when pylint_diff = 0 then 'tie' end
            as pylint_outcome
    from compared
)

select * from final
