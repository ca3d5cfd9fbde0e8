-- swe_ci_solved: whether each SWE-CI task was solved, and the turns it used.
--
-- Grain: one row per run × task with protocol 'swe-ci'.
--
-- Formula (SWE-CI paper, arXiv 2603.03823, appendix B.1–B.2; evoci's metric definitions):
--   solved = every test of T passed at the task's last recorded iteration (n_passed = |T|;
--            counting only T makes the count-based and set-based readings the same);
--   turns  = iterations used = the last recorded iteration (≥ 1), not the padded N.
--
-- Edge cases: unscored tasks (`swe_ci_tasks.reason`: infra_error, invalid, no_gap,
-- incomplete, …) have solved and turns NULL and keep their reason.

create or replace view swe_ci_solved as

with

final as (
    select
        run_id,
        task_id,
        scored,
        solved,
        turns,
        max_iterations,
        reason
    from swe_ci_tasks
)

select * from final
