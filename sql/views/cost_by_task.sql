-- cost_by_task: what the model calls for one task consumed.
--
-- Grain: one row per run × task (every row of `tasks`, plus any (run, task) that only
--        `agent_calls` knows; tasks without calls show zeros).
--
-- Formula: sums over `agent_calls` of the task, every iteration, attempt and role —
--   calls = count(*); input_tokens (includes cached input tokens), output_tokens,
--   cached_tokens, cost_usd = Σ (NULL when any call's cost is unknown: a model without a price); errors = calls whose `error` is not NULL;
--   latency_s = Σ latency_s.
--
-- Edge cases: retried attempts are included (their cost was paid); an infra_error task
-- still shows what its calls cost before the failure.

create or replace view cost_by_task as

with

task_calls as (
    select
        run_id,
        task_id,
        count(*) as calls,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(cached_tokens) as cached_tokens,
        if(count(cost_usd) = count(*), sum(cost_usd), null) as cost_usd,
        count(error) as errors,
        coalesce(sum(latency_s), 0) as latency_s
    from agent_calls
    group by run_id, task_id
),

final as (
    select
        run_id,
        task_id,
        tasks.status as task_status,
        coalesce(c.calls, 0) as calls,
        coalesce(c.input_tokens, 0) as input_tokens,
        coalesce(c.output_tokens, 0) as output_tokens,
        coalesce(c.cached_tokens, 0) as cached_tokens,
        if(c.calls is null, 0, c.cost_usd) as cost_usd,
        coalesce(c.errors, 0) as errors,
        coalesce(c.latency_s, 0) as latency_s
    from tasks
    full join task_calls as c using (run_id, task_id)
)

select * from final
