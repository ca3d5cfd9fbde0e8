-- swe_ci_quality: static code quality of every measured codebase, next to the oracle's.
--
-- Grain: one row per run × task × measured codebase of `code_quality` (the base at
--        iteration 0, the agent's code c_i at each iteration i ≥ 1, the oracle c* at -1).
--
-- Columns: the facts of `code_quality` (see sql/schema.sql: mi, cc_mean, cc_max, pylint_score,
-- lines_added, lines_deleted …), and
--   changed_lines          lines_added + lines_deleted against the base (the codebase's diff size)
--   oracle_mi / oracle_cc_mean / oracle_pylint_score / oracle_changed_lines
--                          the same measurements of the task's oracle c*
--   mi_vs_oracle           mi − oracle_mi (> 0: more maintainable than the oracle)
--   cc_mean_vs_oracle      cc_mean − oracle_cc_mean (> 0: more complex than the oracle)
--   pylint_vs_oracle       pylint_score − oracle_pylint_score (> 0: cleaner than the oracle)
--   changed_lines_ratio    changed_lines / oracle_changed_lines: the size of this codebase's diff
--                          from the base relative to the oracle's (SWE-CI Observation 6, Figure 9)
--
-- Source: SWE-CI paper (arXiv 2603.03823) §4.4, Observations 5 and 6 (MI and Pylint score of
-- the agent's code against the human oracle; changed lines).
--
-- Edge cases: a difference is NULL when either side is NULL (no parsable code, a pylint error,
-- or the oracle not measured); changed_lines_ratio is NULL when the oracle changed no measured
-- line (never a division by zero).

create or replace view swe_ci_quality as

with

measured as (
    select
        q.*,
        q.lines_added + q.lines_deleted as changed_lines
    from code_quality as q
    join tasks as t using (run_id, task_id)
    where t.protocol = 'swe-ci'
),

oracle as (
    select
        run_id,
        task_id,
        mi as oracle_mi,
        cc_mean as oracle_cc_mean,
        pylint_score as oracle_pylint_score,
        changed_lines as oracle_changed_lines
    from measured
    where codebase = 'oracle'
),

final as (
    select
        m.run_id,
        m.task_id,
        m.iteration,
        m.codebase,
        m.codebase_sha,
        m.files,
        m.unparsable_files,
        m.sloc,
        m.mi,
        m.cc_mean,
        m.cc_max,
        m.blocks,
        m.pylint_score,
        m.pylint_messages,
        m.lines_added,
        m.lines_deleted,
        m.changed_lines,
        o.oracle_mi,
        o.oracle_cc_mean,
        o.oracle_pylint_score,
        o.oracle_changed_lines,
        m.mi - o.oracle_mi as mi_vs_oracle,
        m.cc_mean - o.oracle_cc_mean as cc_mean_vs_oracle,
        m.pylint_score - o.oracle_pylint_score as pylint_vs_oracle,
        m.changed_lines / nullif(o.oracle_changed_lines, 0) as changed_lines_ratio,
        m.error
    from measured as m
    left join oracle as o using (run_id, task_id)
)

select * from final
