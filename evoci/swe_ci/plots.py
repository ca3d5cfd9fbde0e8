"""PNG plots of a run, drawn with matplotlib's Agg backend (no display needed).

Plots draw what the views computed (``evoci.swe_ci.digest``); they never compute a metric.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from evoci.swe_ci.digest import RankingPoint, RunDigest, TaskDigest

_MAX_LABELLED_TASKS = 12  # beyond this the legend says "N tasks" instead of naming each


def _figure(width: float = 7.5, height: float = 3.6):
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure  # a Figure without pyplot: thread-safe, nothing global

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def data_url(png: bytes) -> str:
    """An inline ``data:`` URL: shows in the Prefect UI and in a file with no server behind it."""
    return "data:image/png;base64," + base64.b64encode(png).decode()


def a_per_iteration(tasks: Sequence[TaskDigest], max_iterations: int | None, *, title: str) -> bytes:
    """a(c) of every iteration, one line per task; a solved task's last a carried (dashed) to N."""
    fig = _figure()
    ax = fig.add_subplot()
    label = len(tasks) <= _MAX_LABELLED_TASKS
    padded_shown = False
    for task in tasks:
        points = [(it.iteration, it.a) for it in task.iterations if it.a is not None]
        if not points:
            continue
        xs, ys = zip(*points)
        (line,) = ax.plot(xs, ys, marker="o", markersize=4, linewidth=1.6, label=task.task_id if label else None)
        if task.padded_iterations and task.last_iteration is not None and task.max_iterations:
            ax.plot([task.last_iteration, task.max_iterations], [ys[-1], ys[-1]], linestyle="--", linewidth=1.1,
                    color=line.get_color(), alpha=0.6,
                    label=None if padded_shown else "solved: last a carried to N (EvoScore)")
            padded_shown = True
        regressed = [(it.iteration, it.a) for it in task.iterations if it.regressions and it.a is not None]
        if regressed:
            rx, ry = zip(*regressed)
            ax.scatter(rx, ry, marker="v", s=60, color="#c0392b", zorder=3)
    if any(it.regressions for t in tasks for it in t.iterations):
        ax.scatter([], [], marker="v", s=60, color="#c0392b", label="iteration with a regression")
    ax.axhline(0, color="#888888", linewidth=0.8)
    lowest = min((it.a for t in tasks for it in t.iterations if it.a is not None), default=0.0)
    ax.set_ylim(min(-0.1, lowest - 0.1), 1.05)  # a ∈ [−1, 1]; no empty half when nothing went below 0
    ax.set_xlim(left=0, right=max(max_iterations or 1, max((t.last_iteration or 0 for t in tasks), default=1)))
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_xlabel("iteration (0 = base codebase)")
    ax.set_ylabel("a(c)  normalized change")
    ax.set_title(title if label else f"{title} — {len(tasks)} tasks", fontsize=11)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="lower right")
    return _png(fig)


def gamma_ranking(points: Sequence[RankingPoint], *, highlight: str | None = None) -> bytes:
    """EvoScore of each compared run at each γ, labelled with its rank (1 = best)."""
    fig = _figure(7.5, 3.8)
    ax = fig.add_subplot()
    runs = sorted({p.run_id for p in points})
    for run in runs:
        series = sorted((p for p in points if p.run_id == run), key=lambda p: p.gamma)
        xs = [p.gamma for p in series]
        ys = [p.evoscore for p in series]
        bold = run == highlight
        (line,) = ax.plot(xs, ys, marker="o", linewidth=2.4 if bold else 1.4, label=run + (" (this run)" if bold else ""))
        for p in series:
            ax.annotate(f"#{p.rank}", (p.gamma, p.evoscore), textcoords="offset points", xytext=(0, 6),
                        ha="center", fontsize=7, color=line.get_color())
    ax.margins(y=0.15)  # room for the rank labels above the points
    ax.axvline(1.0, color="#888888", linewidth=0.8, linestyle=":")
    ax.set_xlabel("γ  (< 1 weights early iterations, > 1 late ones)")
    ax.set_ylabel("EvoScore e(γ)")
    ax.set_title("EvoScore ranking across γ", fontsize=11)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _png(fig)


def run_plots(digest: RunDigest) -> dict[str, bytes]:
    """The run's plots by name: ``a`` when an iteration has an a(c), ``ranking`` when several runs are compared."""
    plots = {}
    if any(it.a is not None for task in digest.tasks for it in task.iterations):
        plots["a"] = a_per_iteration(digest.tasks, digest.max_iterations, title=f"a(c) per iteration — {digest.run_id}")
    if digest.compared_runs:
        plots["ranking"] = gamma_ranking(digest.ranking, highlight=digest.run_id)
    return plots
