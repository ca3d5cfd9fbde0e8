"""The live progress display of ``evoci run``: one line per task, updated from flow events."""

from __future__ import annotations

import threading

from rich.console import Console, Group
from rich.markup import escape
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evoci.progress import Event, subscribe


class LiveProgress:
    """Context manager: shows each task's iteration and passing target tests while a run goes."""

    def __init__(self, console: Console):
        self.console = console
        self.progress = Progress(
            TextColumn("{task.fields[task_id]:<18}"), TextColumn("{task.fields[stage]:<14}"),
            BarColumn(), MofNCompleteColumn(), TextColumn("tests"), TimeElapsedColumn(),
            console=console, transient=False,
        )
        self.rows: dict[str, int] = {}
        self.lock = threading.Lock()
        self.live = Live(Group(self.progress), console=console, refresh_per_second=4, transient=False)

    def __enter__(self) -> "LiveProgress":
        self.unsubscribe = subscribe(self.on_event)
        if self.console.is_terminal:
            self.live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.unsubscribe()
        if self.console.is_terminal:
            self.live.__exit__(*exc)

    def on_event(self, event: Event) -> None:
        with self.lock:
            row = self.rows.get(event.task_id)
            if row is None:
                row = self.progress.add_task("", total=None, task_id=event.task_id, stage="")
                self.rows[event.task_id] = row
        stage = {
            "prepare": "preparing", "oracle": "oracle tests",
            "iteration": f"iteration {event.iteration}/{event.max_iterations}" if event.iteration is not None else "",
            "done": f"done ({event.iteration} it.)", "invalid": "invalid", "failed": "failed", "input_error": "bad input",
        }.get(event.stage, event.stage)
        update = {"stage": stage}
        if event.targets is not None:
            update["total"] = event.targets
        if event.passed is not None:
            update["completed"] = event.passed
        self.progress.update(row, **update)
        if not self.console.is_terminal and event.stage in ("iteration", "done", "invalid", "failed", "input_error"):
            # No live display on a pipe or in CI: one plain line per step instead.
            detail = f" — {event.passed}/{event.targets} target tests pass" if event.passed is not None else ""
            self.console.print(escape(f"{event.task_id}: {stage}{detail}{' — ' + event.message if event.message else ''}"))
