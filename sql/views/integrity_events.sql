-- integrity_events: every iteration where the grade had to be protected from the agent.
--
-- Grain: one row per run × task × iteration × attempt that has at least one event; any protocol.
--
-- Columns:
--   tampered_files  paths where the graded tree differs from what the agent left: test files
--                   the programmer changed (restored), conftest files, interpreter start-up
--                   hooks, package metadata and `.git` entries the grading tree overrode;
--   discarded_files the architect's changes besides requirement.xml (discarded);
--   integrity_flags added source lines that reach into the test framework (in-process
--                   sabotage, which no harness can prevent: a person should read the diff);
--   event           'flagged' when there is any flag, else 'tampered', else 'discarded'.
--
-- Source: evoci's grading integrity rules (the design brief, "Grading integrity"). The scores
-- are unaffected by this view: tampering is undone before grading; a flagged iteration keeps
-- its score, so a reader decides whether to trust it.
--
-- Edge cases: iterations with none of the three are absent (not rows of empty lists);
-- NULL lists (results files from before a column existed) count as empty.

create or replace view integrity_events as

with

iterations_with_lists as (
    select
        run_id,
        task_id,
        iteration,
        attempt,
        coalesce(tampered_files, []) as tampered_files,
        coalesce(discarded_files, []) as discarded_files,
        coalesce(integrity_flags, []) as integrity_flags
    from iterations
),

final as (
    select
        run_id,
        task_id,
        iteration,
        attempt,
        case
            when len(integrity_flags) > 0 then 'flagged'
            when len(tampered_files) > 0 then 'tampered'
            else 'discarded'
        end as event,
        tampered_files,
        discarded_files,
        integrity_flags
    from iterations_with_lists
    where len(tampered_files) + len(discarded_files) + len(integrity_flags) > 0
)

select * from final
