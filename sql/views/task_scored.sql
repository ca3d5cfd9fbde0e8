-- task_scored: whether each task of each run has a score, whatever its protocol, and why not.
--
-- Grain:   one row per run × task (every `tasks` row).
-- Source:  each protocol's own per-task view decides; this view only gathers the decisions so
--          `run_completeness` can count them the same way for every protocol:
--   swe-ci        swe_ci_tasks.reason (NULL when scored; read its header for every reason; an
--                 'interrupted' task is decided by its facts, like a 'running' one)
--   swe-evo       swe_evo_instances: 'infra_error', 'environment_error' (the test environment could
--                 not be built or proven on the clean base), 'input_error', 'invalid' (incl. empty F2P)
--                 or 'incomplete' (tasks.status still 'running', or 'interrupted' by a signal:
--                 resumable). A missing prediction is the
--                 agent's 0, so it is scored.
--   nitr          nitr_probes: tasks.status 'infra_error' / 'environment_error' (the preflight
--                 found the sandbox cannot build the probe) / 'input_error' / 'invalid',
--                 'incomplete' (still 'running'), else 'not_evaluated' when the probe has no
--                 category (no step recorded, or no functional / structural target).
--   swe-bench-cl  tasks.status 'infra_error' / 'environment_error' / 'input_error' / 'invalid', 'incomplete' (still
--                 'running'), else 'not_evaluated' when the issue has no attempt recorded.
-- Columns: run_id, task_id, protocol, scored (reason is NULL), reason.
-- Edge cases: a task whose dataset line was bad, or that never started, has no `tasks` row
--   and so no row here: `run_completeness` counts those from runs.dataset_tasks and `failures`.
create or replace view task_scored as

with

swe_ci as (
    select run_id, task_id, 'swe-ci' as protocol, reason
    from swe_ci_tasks
),

swe_evo as (
    select
        run_id,
        task_id,
        'swe-evo' as protocol,
        case
            when task_status in ('infra_error', 'environment_error', 'input_error', 'invalid') then task_status
            when invalid then 'invalid'
            when task_status in ('running', 'interrupted') then 'incomplete'
        end as reason
    from swe_evo_instances
),

nitr as (
    select
        run_id,
        task_id,
        'nitr' as protocol,
        case
            when task_status in ('infra_error', 'environment_error', 'input_error', 'invalid') then task_status
            when task_status in ('running', 'interrupted') then 'incomplete'
            when not evaluated then 'not_evaluated'
        end as reason
    from nitr_probes
),

cl as (
    select
        t.run_id,
        t.task_id,
        'swe-bench-cl' as protocol,
        case
            when t.status in ('infra_error', 'environment_error', 'input_error', 'invalid') then t.status
            when t.status in ('running', 'interrupted') then 'incomplete'
            when not exists (
                select 1 from iterations as i where i.run_id = t.run_id and i.task_id = t.task_id
            ) then 'not_evaluated'
        end as reason
    from tasks as t
    where t.protocol = 'swe-bench-cl'
),

unioned as (
    select * from swe_ci
    union all select * from swe_evo
    union all select * from nitr
    union all select * from cl
),

final as (
    select run_id, task_id, protocol, reason is null as scored, reason
    from unioned
)

select * from final
