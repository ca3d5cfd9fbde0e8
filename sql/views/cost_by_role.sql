-- cost_by_role: what each agent role (architect, programmer, agent) consumed in a run.
--
-- Grain: one row per run × role × model found in `agent_calls` (a role that switched
--        models mid-run has one row per model; sum over model for the role's total).
--
-- Formula: sums over `agent_calls` — calls = count(*); input_tokens (includes cached input
--   tokens), output_tokens, cached_tokens, cost_usd = Σ (NULL when any call's cost is unknown: a model without a price); errors = calls whose `error` is not
--   NULL; latency_s = Σ latency_s; avg_cost_usd_per_call = cost_usd / calls.
--
-- Edge cases: retried attempts are included (their cost was paid). Roles that made no call
-- have no row.

create or replace view cost_by_role as

with

final as (
    select
        run_id,
        role,
        model,
        any_value(provider) as provider,
        count(*) as calls,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(cached_tokens) as cached_tokens,
        if(count(cost_usd) = count(*), sum(cost_usd), null) as cost_usd,
        count(error) as errors,
        coalesce(sum(latency_s), 0) as latency_s,
        if(count(cost_usd) = count(*), sum(cost_usd), null) / count(*) as avg_cost_usd_per_call
    from agent_calls
    group by run_id, role, model
)

select * from final
