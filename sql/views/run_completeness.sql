-- run_completeness: whether every task of a run's dataset was scored, so a partial run is never
-- published as a whole one. Every protocol's run-level view joins it.
--
-- Grain:   one row per run (every `runs` row, any protocol).
-- Inputs:  runs.dataset_tasks (tasks the dataset held, bad lines included; NULL when unknown,
--          e.g. a single `evolve` flow run), task_scored (one decision per recorded task),
--          failures with node 'dataset' (bad dataset lines: never a `tasks` row).
-- Formula:
--   tasks_expected  = coalesce(runs.dataset_tasks, recorded tasks + bad lines): every headline's
--                     denominator ("resolved 6 of 12 records")
--   records_not_loaded = bad lines: dataset records that never became a task (their messages are
--                     the `failures` rows with node 'dataset'), listed by the console as "skipped:"
--   not_started     = tasks_expected − recorded tasks − bad lines (≥ 0): the run stopped (or
--                     is still going) before these tasks began
--   tasks_unscored  = recorded tasks not scored + bad lines + not_started
--   unscored_reasons = {reason: count} over the same tasks; reasons are task_scored's plus
--                     'dataset_error' (a bad dataset line) and 'not_started'
--   complete        = tasks_expected > 0 and tasks_unscored = 0
-- Edge cases: a run with no task at all is not complete (nothing was scored). An empty map
--   means every expected task was scored.
create or replace view run_completeness as

with

recorded as (
    select
        run_id,
        count(*) as tasks_recorded,
        count(*) filter (where not scored) as recorded_unscored
    from task_scored
    group by run_id
),

bad_lines as (
    select run_id, count(distinct message) as dataset_errors
    from failures
    where node = 'dataset' and kind = 'input'
    group by run_id
),

counted as (
    select
        runs.run_id,
        coalesce(recorded.tasks_recorded, 0) as tasks_recorded,
        coalesce(recorded.recorded_unscored, 0) as recorded_unscored,
        coalesce(bad_lines.dataset_errors, 0) as dataset_errors,
        coalesce(
            runs.dataset_tasks,
            coalesce(recorded.tasks_recorded, 0) + coalesce(bad_lines.dataset_errors, 0)
        ) as tasks_expected
    from runs
    left join recorded using (run_id)
    left join bad_lines using (run_id)
),

with_missing as (
    select
        *,
        greatest(tasks_expected - tasks_recorded - dataset_errors, 0) as not_started
    from counted
),

reasons as (
    select run_id, reason, count(*) as n
    from task_scored
    where not scored
    group by run_id, reason
    union all
    select run_id, 'dataset_error', dataset_errors from with_missing where dataset_errors > 0
    union all
    select run_id, 'not_started', not_started from with_missing where not_started > 0
),

reason_maps as (
    select run_id, map_from_entries(list(struct_pack(k := reason, v := n) order by reason)) as unscored_reasons
    from reasons
    group by run_id
),

final as (
    select
        m.run_id,
        m.tasks_expected,
        m.dataset_errors as records_not_loaded,
        m.recorded_unscored + m.dataset_errors + m.not_started as tasks_unscored,
        coalesce(r.unscored_reasons, map()) as unscored_reasons,
        m.tasks_expected > 0 and m.recorded_unscored + m.dataset_errors + m.not_started = 0 as complete
    from with_missing as m
    left join reason_maps as r using (run_id)
)

select * from final
