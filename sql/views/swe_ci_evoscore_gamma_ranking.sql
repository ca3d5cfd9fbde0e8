-- evoscore_gamma_ranking(gammas := [0.5, 0.75, 1.0, 1.25, 1.5, 2.0]): runs ranked by EvoScore
-- at each γ — the paper's γ-sensitivity view.
--
-- Grain: one row per run (protocol 'swe-ci') × γ in `gammas`.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §4.2, Fig. 5): evoscore = `evoscore_runs(gamma)`
--   (via `swe_ci_evoscore_runs_by_gamma`);
--   rank = dense_rank() over (partition by γ order by evoscore desc) — 1 is the best run;
--   equal scores share a rank. rank_change = rank at γ = 1 − rank at this γ (positive:
--   the run climbs as γ moves here from 1).
--
-- Edge cases:
--   * A run with no scored task (evoscore NULL) has rank NULL and does not take a rank.
--   * rank_change is NULL when 1.0 is not among `gammas` or either rank is NULL.
--   * Any γ ≤ 0 in the list raises an error. Duplicate γ values are collapsed.
--
-- Example: select * from evoscore_gamma_ranking(gammas := [1.0, 3.0]) order by gamma, rank

create or replace macro evoscore_gamma_ranking(gammas := [0.5, 0.75, 1.0, 1.25, 1.5, 2.0]) as table

with

run_scores as (
    select run_id, gamma, n_scored, evoscore
    from swe_ci_evoscore_runs_by_gamma(gammas := gammas)
),

ranked as (
    select
        run_scores.*,
        case
            when evoscore is not null
                then dense_rank() over (
                    partition by gamma, evoscore is null order by evoscore desc
                )
        end as rank
    from run_scores
),

final as (
    select
        run_id,
        gamma,
        n_scored,
        evoscore,
        rank,
        max(rank) filter (where gamma = 1.0) over (partition by run_id) - rank as rank_change
    from ranked
)

select * from final
