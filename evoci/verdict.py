"""What one command did to its run, said plainly, and its exit code.

The score table shows everything the run holds, including results an earlier command made. A
task this command refused (its dataset line changed under the run id) keeps those earlier
results, and a task may end without a score (infrastructure, bad input, interrupted, never
started, a dataset line that did not load). Such a run is not this command's success: each of
those tasks is named with why, and the command exits 1. ``run_completeness`` and
``task_scored`` decide what is scored, as for every other reader of the results.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape  # what the run holds is text, never markup (a test id may read `[/x]`)

from evoci.settings import location
from evoci.store import reading


def print_refused(console: Console, refused: list[tuple[str, str]]) -> None:
    """Before the scores: the tasks this command refused, whose rows below were made earlier."""
    for task_id, reason in refused:
        console.print(f"[red]refused:[/] task {escape(task_id)} — {escape(reason)}", soft_wrap=True)
    if refused:
        console.print(f"[yellow]kept results:[/] the scores below for {escape(', '.join(t for t, _ in refused))} were recorded "
                      "by an earlier command; this one changed nothing for them", soft_wrap=True)


def exit_code(db: Path, run_id: str, console: Console, *, refused: list[tuple[str, str]] = ()) -> int:
    """0 when every task of the run is scored and none was refused; else name each such task and return 1."""
    db = location(db)
    if isinstance(db, Path) and not db.exists():
        return 1
    with reading(db, run_id=run_id) as con:
        complete = con.execute("select complete, tasks_unscored, unscored_reasons from run_completeness where run_id = ?",
                               [run_id]).fetchone()
        unscored = con.execute("""select s.task_id, s.reason, t.status, t.reason from task_scored s
                                  join tasks t using (run_id, task_id) where run_id = ? and not s.scored
                                  order by s.task_id""", [run_id]).fetchall()
    if complete is None:
        console.print(f"[red]run {run_id} was not recorded[/] — see the errors above")
        return 1
    for task_id, reason, status, detail in unscored:
        note = f" ({status})" if status not in (reason, "done", "running") else ""
        console.print(f"[red]not scored:[/] task {escape(task_id)} — {escape(str(reason))}{escape(note)}" + (f": {escape(detail)}" if detail else ""),
                      soft_wrap=True)
    if complete[0] and not refused:
        return 0
    problems = [f"{len(refused)} task(s) refused"] if refused else []
    if not complete[0]:
        reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(complete[2].items()))
        problems.append(f"{complete[1]} task(s) without a score ({reasons or 'nothing was scored'})")
    console.print(f"[red]exit 1:[/] {escape('; '.join(problems))} — fix what is named above, then run the same command "
                  "again to resume", soft_wrap=True)
    return 1


__all__ = ["exit_code", "print_refused"]
