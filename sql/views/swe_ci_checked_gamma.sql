-- swe_ci_checked_gamma(gamma): γ as a double, or an error saying why γ is unusable.
--
-- Grain: scalar macro (one value), used by evoscore, evoscore_runs, evoscore_gamma_ranking.
--
-- Formula: γ must be > 0 for EvoScore's weights γ^i (SWE-CI paper, arXiv 2603.03823, eq. 3) to be
-- positive; γ ≤ 0 or NULL raises "gamma must be > 0, got …".

create or replace macro swe_ci_checked_gamma(gamma) as
    case
        when gamma > 0 then gamma::double
        else error('EvoScore: gamma must be > 0 (e.g. gamma := 1.0), got '
                   || coalesce(gamma::varchar, 'NULL'))
    end
