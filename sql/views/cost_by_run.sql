-- cost_by_run: what a run's model calls consumed, all protocols.
--
-- Grain: one row per run (every row of `runs`, plus any run_id that only `agent_calls`
--        knows; runs without calls show zeros).
--
-- Formula: sums over `agent_calls` of the run, every task, iteration, attempt and role —
--   calls = count(*); input_tokens (includes cached input tokens), output_tokens,
--   cached_tokens, cost_usd = Σ (NULL when any call's cost is unknown: a model without a price); errors = calls whose `error` is not NULL;
--   latency_s = Σ latency_s (model time, not wall time: calls may overlap).
--
-- Edge cases: retried attempts are included — their cost was paid. The replay agent records
-- zero-cost calls, so a replay run shows calls > 0 and cost_usd = 0.

create or replace view cost_by_run as

with

run_calls as (
    select
        run_id,
        count(*) as calls,
        sum(input_tokens) as input_tokens,
        sum(output_tokens) as output_tokens,
        sum(cached_tokens) as cached_tokens,
        if(count(cost_usd) = count(*), sum(cost_usd), null) as cost_usd,
        count(error) as errors,
        coalesce(sum(latency_s), 0) as latency_s
    from agent_calls
    group by run_id
),

final as (
    select
        run_id,
        runs.protocol,
        coalesce(c.calls, 0) as calls,
        coalesce(c.input_tokens, 0) as input_tokens,
        coalesce(c.output_tokens, 0) as output_tokens,
        coalesce(c.cached_tokens, 0) as cached_tokens,
        if(c.calls is null, 0, c.cost_usd) as cost_usd,
        coalesce(c.errors, 0) as errors,
        coalesce(c.latency_s, 0) as latency_s
    from runs
    full join run_calls as c using (run_id)
)

select * from final
