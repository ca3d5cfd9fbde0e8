"""``evoci report`` for a NITR run: every probe's category and the run's rates, read from the views."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evoci.digest import fmt
from evoci.report import dataset_counts
from evoci.store import connect


def is_nitr_run(db: Path, run_id: str) -> bool:
    with connect(db, read_only=True) as con:
        row = con.execute("select protocol from runs where run_id = ?", [run_id]).fetchone()
    return bool(row) and row[0] == "nitr"


def print_nitr_report(db: Path, run_id: str, *, console: Console | None = None) -> None:
    console = console or Console()
    with connect(db, read_only=True) as con:
        probes = con.execute(
            "select task_id, dimension, granularity, steps, category, n_functional, functional_passed, n_structural, "
            "structural_passed, flags from nitr_probes where run_id = ? order by task_id", [run_id]).fetchall()
        totals = con.execute(
            "select evaluated, unevaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate from nitr_runs where run_id = ?",
            [run_id]).fetchone()
        dims = con.execute(
            "select dimension, evaluated, n_pass, pass_rate, s_rate from nitr_by_dimension where run_id = ? "
            "order by dimension", [run_id]).fetchall()
        reasons = dict(con.execute("select task_id, reason from tasks where run_id = ? and reason is not null",
                                   [run_id]).fetchall())
        cases, not_loaded = dataset_counts(con, run_id)
    table = Table(title=f"NITR run {run_id}")
    for col in ("probe", "dimension", "granularity", "steps", "category", "functional", "structural", "note"):
        table.add_column(col)
    for tid, dim, gran, steps, cat, nf, fp, ns, sp, flags in probes:
        note = ", ".join(flags) + (f" {reasons[tid]}" if tid in reasons else "")
        table.add_row(escape(tid), dim or "", gran or "", str(steps), cat or "—", f"{fp}/{nf}", f"{sp}/{ns}", escape(note.strip()))
    console.print(table)
    if totals:
        evaluated, unevaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate = totals
        console.print(f"[bold]run[/]: {evaluated} of {cases} case(s) evaluated ({not_loaded} not loaded, "
                      f"{unevaluated} not evaluated) · Pass {n_pass} · F {n_f} · S {n_s} · "
                      f"B {n_b} · E {n_e} · pass rate {fmt(pass_rate)} · S-rate {fmt(s_rate)}")
    if dims:
        console.print("by dimension: " + " · ".join(f"{d or '?'} {fmt(p)} ({n}/{e})" for d, e, n, p, _ in dims))
    console.print(f"query these numbers: evoci sql \"select * from nitr_probes where run_id = '{run_id}'\"", style="dim")


def _cell(value: object) -> str:
    return "—" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def publish_nitr_run(db: Path, run_id: str) -> None:
    """The run's page in the Prefect UI: a summary (rates) and a table (one row per probe). Never raises."""
    import logging

    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    from evoci.artifacts import artifact_key

    try:
        with connect(db, read_only=True) as con:
            probes = con.execute(
                "select task_id, dimension, granularity, steps, category, functional_passed || '/' || n_functional, "
                "structural_passed || '/' || n_structural, flags from nitr_probes where run_id = ? order by task_id",
                [run_id]).fetchall()
            totals = con.execute("select evaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate from nitr_runs "
                                 "where run_id = ?", [run_id]).fetchone()
        columns = ("probe", "dimension", "granularity", "steps", "category", "functional", "structural", "flags")
        create_table_artifact([dict(zip(columns, map(_cell, row))) for row in probes],
                              key=artifact_key(run_id, "probes"), description=f"NITR run {run_id}: one row per probe")
        if totals:
            evaluated, n_pass, n_f, n_s, n_b, n_e, pass_rate, s_rate = totals
            create_markdown_artifact(
                f"# NITR run {run_id}\n\n{evaluated} probe(s) evaluated: Pass {n_pass} · F {n_f} · S {n_s} · "
                f"B {n_b} · E {n_e}\n\npass rate **{fmt(pass_rate)}** · S-rate **{fmt(s_rate)}**\n\n"
                f"`evoci sql \"select * from nitr_probes where run_id = '{run_id}'\"`\n",
                key=artifact_key(run_id, "summary"), description=f"NITR run {run_id}: pass rate {fmt(pass_rate)}")
    except Exception as exc:  # an artifact is a view of the results; it must never fail the run
        logging.getLogger(__name__).warning("could not create the NITR run's artifacts (the results are unaffected): %s", exc)
