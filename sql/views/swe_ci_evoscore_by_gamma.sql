-- swe_ci_evoscore_by_gamma(gammas := [1.0]): SWE-CI's EvoScore of each task at every γ in a
-- list. The one place EvoScore's formula is written; `evoscore`, `evoscore_runs` and
-- `evoscore_gamma_ranking` read it.
--
-- Grain: one row per run × task (protocol 'swe-ci', unscored tasks included) × γ in `gammas`.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, §2.3, eq. 3):
--   e(γ) = Σ_{i=1..N} γ^i · a_i  /  Σ_{i=1..N} γ^i,   N = runs.max_iterations,
--   a_i = `swe_ci_iterations.a` at iteration i. γ = 1 is the mean normalized change; γ > 1
--   weights later iterations more (the paper's choice), γ < 1 earlier ones (§4.2, Fig. 5).
--
-- Edge cases:
--   * Early stop: a task solved at iteration L < N (all of T passed) has a_i = a_L for
--     i = L+1..N, as the official harness pads; `padded_iterations` = N − L.
--   * Only solved tasks are padded. A task that stopped below N without being solved
--     (crash, still running, or 'done' under a lower per-task limit) is 'incomplete'.
--   * evoscore is NULL, never −1 or 0, when `swe_ci_tasks.reason` is set: 'infra_error',
--     'input_error', 'invalid', 'no_gap', 'incomplete', 'no_max_iterations',
--     'beyond_max_iterations', 'missing_iteration' (defined in swe_ci_tasks.sql).
--   * An agent_error/timeout iteration contributes its a (usually −1); an infrastructure
--     failure has no iteration row and makes the task 'infra_error'.
--   * γ ≤ 0 raises an error (γ^i would flip sign or vanish); duplicate γ are collapsed.

create or replace macro swe_ci_evoscore_by_gamma(gammas := [1.0]) as table

with

gamma_values as (
    select distinct swe_ci_checked_gamma(g) as gamma
    from (select unnest(gammas) as g)
),

task_summaries as materialized (
    -- read once: both CTEs below use it
    select
        run_id, task_id, task_status, max_iterations, last_iteration, a_series, solved, scored,
        reason
    from swe_ci_tasks
),

padded_iterations as (
    -- i = 1..N; after the last recorded iteration L (only a solved task stops early) a_L
    select
        run_id,
        task_id,
        iteration,
        a_series[least(iteration, last_iteration)] as a,
        iteration > last_iteration as padded
    from (
        select
            run_id,
            task_id,
            last_iteration,
            a_series,
            unnest(range(1, max_iterations + 1)) as iteration
        from task_summaries
        where scored
    )
),

task_scores as (
    select
        p.run_id,
        p.task_id,
        g.gamma,
        sum(pow(g.gamma, p.iteration) * p.a) / sum(pow(g.gamma, p.iteration)) as evoscore,
        count(*) filter (where p.padded) as padded_iterations
    from padded_iterations as p
    cross join gamma_values as g
    group by p.run_id, p.task_id, g.gamma
),

final as (
    select
        t.run_id,
        t.task_id,
        g.gamma,
        t.task_status,
        t.max_iterations,
        t.last_iteration,
        ts.padded_iterations,
        t.solved,
        ts.evoscore,
        t.reason
    from task_summaries as t
    cross join gamma_values as g
    left join task_scores as ts using (run_id, task_id, gamma)
)

select * from final
