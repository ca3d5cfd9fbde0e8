-- cl_metrics(beta, lambda_f, lambda_ft, lambda_bwt, lambda_aulc): the SWE-Bench-CL metrics.
--
-- Grain:   table macro; one row per run × sequence. cl_metrics_default calls it with the
--          defaults; cl_run_metrics averages it over a run's sequences.
-- Input:   cl_matrix (read its header for the indexing: a(i, j) = issue j attempted with
--          memory M(i); M(0) = memory off) and cl_attempts (for TUE). N = n_tasks.
-- Formulas (evoci's metric definitions "SWE-Bench-CL"; arXiv 2507.00014, §7 table, §7.1 CL-F1 / CL-Fβ, CL-Score):
--   acc        ACC  = mean_{j=1..N} a(N, j)
--   forgetting F    = mean_{j=1..N−1} ( max_{j≤k≤N−1} a(k, j) − a(N, j) )
--                     (standard forgetting; the paper prints the max over 1≤k≤j, which is
--                     degenerate on a lower-triangular matrix — evoci keeps j≤k≤N−1)
--   ft         FT   = mean_{i=1..N−1} ( a(i, i+1) − a(0, i+1) )
--   bwt        BWT  = mean_{i=1..N−1} ( a(N, i) − a(i, i) )
--   aulc       AULC = (1/N) Σ_{i=1..N} (1/i) Σ_{k=1..i} a(k, k)
--   tue        TUE  = median(wall_s | resolved attempt) / median(wall_s | all attempts), over
--                     every attempt of the sequence's valid issues at stages 0..N
--   cl_p       CL-P = mean_{i=1..N} a(i, i)
--   cl_s       CL-S = 1 − F
--   cl_f1      CL-F1 = 2·P·S / (P + S)
--   cl_fbeta   CL-Fβ = (1 + β²)·P·S / (β²·P + S)      (β < 1 favours plasticity, β > 1 stability)
--   cl_score   CL-Score = ACC − λF·F + λFT·FT + λBWT·BWT + λAULC·AULC + CL-Fβ
--   The paper's table also lists λTUE, but its CL-Score formula has no TUE term; none here.
-- Parameters: beta > 0 (default 1), every lambda ≥ 0 (default 1); anything else raises.
--   The parameters are repeated as columns so results of several settings can be unioned.
-- Edge cases: a NULL entry of a(i, j) (not evaluated) drops out of every mean and max, and a
--   difference with a NULL side drops out — never read as 0. The running means of AULC are
--   means of the defined diagonal entries so far. Undefined results are NULL: N = 1 → F, FT,
--   BWT, CL-S, CL-F1, CL-Fβ and CL-Score are NULL (empty means); P + S = 0 → CL-F1 NULL
--   (0/0); no resolved attempt → TUE NULL. A term whose λ is 0 adds 0 even if undefined.
--   cells_missing counts the cells the protocol should have filled (cell 'memory_off',
--   'in_sequence' or 'retest' in cl_matrix) that are NULL: a quick completeness check.
create or replace macro cl_metrics(
    beta := 1.0,
    lambda_f := 1.0,
    lambda_ft := 1.0,
    lambda_bwt := 1.0,
    lambda_aulc := 1.0
) as table

with

params as (
    select
        case
            when beta is null or beta <= 0 then error(
                'cl_metrics: beta must be > 0, got ' || coalesce(beta::varchar, 'NULL')
            )
            else beta::double
        end as p_beta,
        case
            when lambda_f is null or lambda_f < 0 then error(
                'cl_metrics: lambda_f must be >= 0, got ' || coalesce(lambda_f::varchar, 'NULL')
            )
            else lambda_f::double
        end as p_lambda_f,
        case
            when lambda_ft is null or lambda_ft < 0 then error(
                'cl_metrics: lambda_ft must be >= 0, got ' || coalesce(lambda_ft::varchar, 'NULL')
            )
            else lambda_ft::double
        end as p_lambda_ft,
        case
            when lambda_bwt is null or lambda_bwt < 0 then error(
                'cl_metrics: lambda_bwt must be >= 0, got ' || coalesce(lambda_bwt::varchar, 'NULL')
            )
            else lambda_bwt::double
        end as p_lambda_bwt,
        case
            when lambda_aulc is null or lambda_aulc < 0 then error(
                'cl_metrics: lambda_aulc must be >= 0, got ' || coalesce(lambda_aulc::varchar, 'NULL')
            )
            else lambda_aulc::double
        end as p_lambda_aulc
),

matrix as (
    select * from cl_matrix
),

sequences as (
    select
        run_id,
        sequence_id,
        any_value(n_tasks) as n_tasks,
        count(*) filter (where cell <> 'ahead' and a is null) as cells_missing
    from matrix
    group by run_id, sequence_id
),

final_row as (
    -- a(N, j)
    select run_id, sequence_id, sequence_position, a as a_final
    from matrix
    where memory_stage = n_tasks
),

diagonal as (
    -- a(j, j), j = 1..N
    select run_id, sequence_id, sequence_position, a as a_diag
    from matrix
    where memory_stage = sequence_position
),

accuracy as (
    select run_id, sequence_id, avg(a_final) as acc
    from final_row
    group by run_id, sequence_id
),

forgetting_terms as (
    -- per j < N: max_{j≤k≤N−1} a(k, j) − a(N, j)
    select
        best.run_id,
        best.sequence_id,
        best.a_best - final_row.a_final as term
    from (
        select run_id, sequence_id, sequence_position, max(a) as a_best
        from matrix
        where sequence_position < n_tasks
            and memory_stage between sequence_position and n_tasks - 1
        group by run_id, sequence_id, sequence_position
    ) as best
    join final_row using (run_id, sequence_id, sequence_position)
),

forgetting as (
    select run_id, sequence_id, avg(term) as forgetting
    from forgetting_terms
    group by run_id, sequence_id
),

forward_transfer as (
    -- per i = 1..N−1, i.e. issue j = i + 1 = 2..N: a(j−1, j) − a(0, j)
    select
        in_sequence.run_id,
        in_sequence.sequence_id,
        avg(in_sequence.a - memory_off.a) as ft
    from matrix as in_sequence
    join matrix as memory_off
        on memory_off.run_id = in_sequence.run_id
        and memory_off.sequence_id = in_sequence.sequence_id
        and memory_off.sequence_position = in_sequence.sequence_position
        and memory_off.memory_stage = 0
    where in_sequence.sequence_position >= 2
        and in_sequence.memory_stage = in_sequence.sequence_position - 1
    group by in_sequence.run_id, in_sequence.sequence_id
),

backward_transfer as (
    -- per i = 1..N−1: a(N, i) − a(i, i)
    select
        final_row.run_id,
        final_row.sequence_id,
        avg(final_row.a_final - diagonal.a_diag) as bwt
    from final_row
    join diagonal using (run_id, sequence_id, sequence_position)
    join sequences using (run_id, sequence_id)
    where final_row.sequence_position < sequences.n_tasks
    group by final_row.run_id, final_row.sequence_id
),

learning_curve as (
    -- (1/i) Σ_{k≤i} a(k, k) as the running mean of the defined diagonal entries
    select
        run_id,
        sequence_id,
        a_diag,
        avg(a_diag) over (
            partition by run_id, sequence_id
            order by sequence_position
            rows between unbounded preceding and current row
        ) as running_mean
    from diagonal
),

plasticity_and_curve as (
    select
        run_id,
        sequence_id,
        avg(a_diag) as cl_p,
        avg(running_mean) as aulc
    from learning_curve
    group by run_id, sequence_id
),

tool_use as (
    select
        cl_attempts.run_id,
        cl_attempts.sequence_id,
        median(cl_attempts.wall_s) filter (where cl_attempts.resolved) as median_s_resolved,
        median(cl_attempts.wall_s) as median_s_all
    from cl_attempts
    join sequences using (run_id, sequence_id)
    where cl_attempts.valid
        and cl_attempts.memory_stage <= sequences.n_tasks
    group by cl_attempts.run_id, cl_attempts.sequence_id
),

joined as (
    select
        sequences.run_id,
        sequences.sequence_id,
        sequences.n_tasks,
        sequences.cells_missing,
        accuracy.acc,
        forgetting.forgetting,
        forward_transfer.ft,
        backward_transfer.bwt,
        plasticity_and_curve.aulc,
        case
            when tool_use.median_s_all <> 0
                then tool_use.median_s_resolved / tool_use.median_s_all
        end as tue,
        plasticity_and_curve.cl_p,
        1 - forgetting.forgetting as cl_s,
        params.*
    from sequences
    cross join params
    left join accuracy using (run_id, sequence_id)
    left join forgetting using (run_id, sequence_id)
    left join forward_transfer using (run_id, sequence_id)
    left join backward_transfer using (run_id, sequence_id)
    left join plasticity_and_curve using (run_id, sequence_id)
    left join tool_use using (run_id, sequence_id)
),

harmonic as (
    select
        *,
        case when cl_p + cl_s <> 0 then 2 * cl_p * cl_s / (cl_p + cl_s) end as cl_f1,
        case
            when p_beta * p_beta * cl_p + cl_s <> 0
                then (1 + p_beta * p_beta) * cl_p * cl_s / (p_beta * p_beta * cl_p + cl_s)
        end as cl_fbeta
    from joined
),

final as (
    select
        run_id,
        sequence_id,
        n_tasks,
        cells_missing,
        acc,
        forgetting,
        ft,
        bwt,
        aulc,
        tue,
        cl_p,
        cl_s,
        cl_f1,
        cl_fbeta,
        acc
            - case when p_lambda_f = 0 then 0 else p_lambda_f * forgetting end
            + case when p_lambda_ft = 0 then 0 else p_lambda_ft * ft end
            + case when p_lambda_bwt = 0 then 0 else p_lambda_bwt * bwt end
            + case when p_lambda_aulc = 0 then 0 else p_lambda_aulc * aulc end
            + cl_fbeta as cl_score,
        p_beta as beta,
        p_lambda_f as lambda_f,
        p_lambda_ft as lambda_ft,
        p_lambda_bwt as lambda_bwt,
        p_lambda_aulc as lambda_aulc
    from harmonic
)

select * from final
