-- wilson_low(k, n, z := 1.96): lower bound of the Wilson score interval for k successes in n trials.
--
-- Grain:   scalar macro; one value per call.
-- Formula: p = k/n;  (p + z²/2n − z·√(p(1−p)/n + z²/4n²)) / (1 + z²/n).
--          z = 1.96 gives the 95 % interval.
-- Source:  Wilson (1927); used by SWE-EVO (arXiv 2512.18470, §4.2 "Performance on SWE-EVO"):
--          12 of 48 → [14.9 %, 38.8 %], 1 of 48 → [0.4 %, 10.9 %].
-- Returns: a fraction in [0, 1] (not percent).
-- Edge cases: n = 0 or NULL → NULL (no trials, no interval); k = 0 → 0; k = n → < 1.
--             Clamped to [0, 1] so rounding can never leave the unit interval.
create or replace macro wilson_low(k, n, z := 1.96) as (
    case
        when n > 0 then greatest(0.0,
            (k / n + z * z / (2 * n)
             - z * sqrt((k / n) * (1 - k / n) / n + z * z / (4 * n * n)))
            / (1 + z * z / n))
    end
)::double;
