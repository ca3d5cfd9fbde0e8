"""``evoci report --html FILE``: a run's artifacts as one self-contained HTML file.

The same content as the run's Prefect artifacts (``evoci.swe_ci.report``): the summary line,
the task table, a(c) per iteration per task, the EvoScore ranking across γ when other
runs of the dataset exist, and each task's iteration table and plot. Plots are inline
base64 PNGs and the style is inline: the file opens anywhere, offline, with nothing else.
"""

from __future__ import annotations

import html
from pathlib import Path

from evoci.digest import fmt, sql_hint
from evoci.swe_ci.digest import RunDigest, load_digest
from evoci.swe_ci.plots import a_per_iteration, data_url, run_plots
from evoci.swe_ci.report import headline, iteration_rows, task_outcome, task_rows

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1d1d1f; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; } h3 { font-size: 1.05rem; margin-top: 1.5rem; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #d0d0d5; padding: .25rem .6rem; text-align: right; }
th { background: #f2f2f5; } td:first-child, th:first-child { text-align: left; }
img { max-width: 100%; border: 1px solid #e5e5ea; }
.headline { font-size: 1.05rem; } code { background: #f2f2f5; padding: 0 .25rem; }
"""


def _e(value: object) -> str:
    return html.escape(str(value))


def _md_inline(text: str) -> str:
    """The artifacts' ``**bold**`` as HTML; everything else escaped."""
    parts = _e(text).split("**")
    return "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))


def _table(rows: list[dict[str, object]], *, header: bool = True) -> str:
    if not rows:
        return "<p><em>nothing recorded</em></p>"
    head = "<thead><tr>" + "".join(f"<th>{_e(k)}</th>" for k in rows[0]) + "</tr></thead>" if header else ""
    body = "".join("<tr>" + "".join(f"<td>{_e(v)}</td>" for v in r.values()) + "</tr>" for r in rows)
    return f"<table>{head}<tbody>{body}</tbody></table>"


def _img(png: bytes, alt: str) -> str:
    return f'<img src="{data_url(png)}" alt="{_e(alt)}">'


def render(digest: RunDigest) -> str:
    """The whole page."""
    plots = run_plots(digest)
    meta = [{"k": "dataset", "v": digest.dataset or "—"}, {"k": "agents", "v": digest.agents()},
            {"k": "sandbox", "v": digest.sandbox()}, {"k": "max iterations N", "v": fmt(digest.max_iterations)}]
    out = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>evoci run {_e(digest.run_id)}</title><style>{STYLE}</style></head><body>",
        f"<h1>evoci run <code>{_e(digest.run_id)}</code></h1>",
        f'<p class="headline">{_md_inline(headline(digest))}</p>',
        _table(meta, header=False),
        "<h2>Tasks</h2>", _table(task_rows(digest)),
    ]
    if "a" in plots:
        out += ["<h2>a(c) per iteration</h2>", _img(plots["a"], "a(c) per iteration")]
    if "ranking" in plots:
        gammas = sorted({p.gamma for p in digest.ranking})
        rows = []
        for run in digest.compared_runs:
            by_gamma = {p.gamma: p for p in digest.ranking if p.run_id == run}
            row: dict[str, object] = {"run": run + (" ← this run" if run == digest.run_id else "")}
            row.update({f"γ={g:g}": f"#{by_gamma[g].rank} ({fmt(by_gamma[g].evoscore)})" if g in by_gamma else "—"
                        for g in gammas})
            rows.append(row)
        out += [f"<h2>EvoScore ranking across γ ({len(rows)} runs of dataset <code>{_e(digest.dataset)}</code>)</h2>",
                _table(rows), _img(plots["ranking"], "EvoScore ranking across γ")]
    for task in digest.tasks:
        out += [f"<h3>Task <code>{_e(task.task_id)}</code></h3>", f"<p>{_md_inline(task_outcome(task))}</p>"]
        if len(digest.tasks) > 1:  # with one task, the run's plot above is this one
            plot = a_per_iteration([task], digest.max_iterations, title=f"a(c) per iteration — {task.task_id}")
            out.append(_img(plot, f"a(c) per iteration of {task.task_id}"))
        out.append(_table(iteration_rows(task)))
    hint = sql_hint(digest.db, f"select * from evoscore(gamma := 1.0) where run_id = {digest.run_id!r}")
    out += [f"<p>Query these numbers: <code>{_e(hint)}</code></p>", "</body></html>"]
    return "\n".join(out) + "\n"


def write_html(db: Path, run_id: str, path: Path) -> Path:
    """Write the report of ``run_id`` to ``path``; returns the path written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(load_digest(db, run_id)), encoding="utf-8")
    return path.absolute()
