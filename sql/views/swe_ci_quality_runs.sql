-- swe_ci_quality_runs: win / loss rate of the agent's final code against the oracle on MI and
-- on Pylint score, over solved tasks, per run.
--
-- Grain: one row per run with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.4 Observation 5, Figure 8): over the run's
-- solved tasks whose final code and oracle were both measured (n_mi_compared,
-- n_pylint_compared), mi_win_rate = n(mi_outcome = 'win') / n_mi_compared, likewise
-- mi_loss_rate, mi_tie_rate and the pylint_* rates (`swe_ci_quality_final` decides each
-- outcome). Observation 6 (Figure 9): mean_changed_lines and mean_oracle_changed_lines over
-- the same solved tasks.
--
-- Edge cases: no solved task with both measurements → the rates are NULL (never 0); a run
-- without quality measurements has n_*_compared = 0.

create or replace view swe_ci_quality_runs as

with

swe_ci_runs as (
    select run_id
    from runs
    where protocol = 'swe-ci'
),

solved as (
    select *
    from swe_ci_quality_final
    where solved
),

run_counts as (
    select
        run_id,
        count(*) as n_solved,
        count(mi_outcome) as n_mi_compared,
        count(*) filter (where mi_outcome = 'win') as n_mi_win,
        count(*) filter (where mi_outcome = 'loss') as n_mi_loss,
        count(*) filter (where mi_outcome = 'tie') as n_mi_tie,
        count(pylint_outcome) as n_pylint_compared,
        count(*) filter (where pylint_outcome = 'win') as n_pylint_win,
        count(*) filter (where pylint_outcome = 'loss') as n_pylint_loss,
        count(*) filter (where pylint_outcome = 'tie') as n_pylint_tie,
        avg(changed_lines) as mean_changed_lines,
        avg(oracle_changed_lines) as mean_oracle_changed_lines
    from solved
    group by run_id
),

final as (
    select
        r.run_id,
        coalesce(c.n_solved, 0) as n_solved,
        coalesce(c.n_mi_compared, 0) as n_mi_compared,
        c.n_mi_win / nullif(c.n_mi_compared, 0) as mi_win_rate,
        c.n_mi_loss / nullif(c.n_mi_compared, 0) as mi_loss_rate,
        c.n_mi_tie / nullif(c.n_mi_compared, 0) as mi_tie_rate,
        coalesce(c.n_pylint_compared, 0) as n_pylint_compared,
        c.n_pylint_win / nullif(c.n_pylint_compared, 0) as pylint_win_rate,
        c.n_pylint_loss / nullif(c.n_pylint_compared, 0) as pylint_loss_rate,
        c.n_pylint_tie / nullif(c.n_pylint_compared, 0) as pylint_tie_rate,
        c.mean_changed_lines,
        c.mean_oracle_changed_lines
    from swe_ci_runs as r
    left join run_counts as c using (run_id)
)

select * from final
