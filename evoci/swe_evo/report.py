"""A SWE-EVO run's results for people: ``evoci report`` and the flow run's artifact in the Prefect UI.

Every number is read from ``swe_evo_instances``, ``swe_evo_runs`` and ``swe_evo_failure_modes``;
this module only formats.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evoci.digest import fmt
from evoci.report import dataset_counts
from evoci.store import connect, reading

HEADER = ["instance", "F2P passing", "P2P passing", "applied", "resolved", "fix rate", "flags"]


@dataclass
class EvoSummary:
    """One table row per instance, the run's headline, and the judge's failure modes."""

    run_id: str
    rows: list[list[str]] = field(default_factory=list)
    headline: str = ""
    failure_modes: str = ""


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def is_swe_evo_run(db: Path, run_id: str) -> bool:
    with connect(db, read_only=True) as con:
        row = con.execute("select protocol from runs where run_id = ?", [run_id]).fetchone()
    return bool(row) and row[0] == "swe-evo"


def load_summary(con, run_id: str) -> EvoSummary:
    summary = EvoSummary(run_id)
    for task_id, n_f2p, f2p, n_p2p, p2p, applied, resolved, fix, flags in con.execute(
            """select task_id, n_f2p, f2p_passed, n_p2p, p2p_passed, patch_applied, resolved, fix_rate, flags
               from swe_evo_instances where run_id = ? order by task_id""", [run_id]).fetchall():
        summary.rows.append([task_id, f"{f2p}/{n_f2p}", f"{p2p}/{n_p2p}", fmt(applied), fmt(resolved), fmt(fix),
                             ", ".join(flags or [])])
    run = con.execute(
        """select valid_instances, invalid_instances, missing_predictions, environment_errors, resolved_instances, resolved_rate,
                  resolved_rate_low, resolved_rate_high, patches_applied, patch_apply_rate, patch_apply_rate_low,
                  patch_apply_rate_high, fix_rate, fix_rate_low, fix_rate_high, f2p_pass_rate, p2p_pass_rate
           from swe_evo_runs where run_id = ?""", [run_id]).fetchone()
    if run is not None:
        (valid, invalid, missing, env_errors, resolved, r, r_lo, r_hi, applied, a, a_lo, a_hi, fix, f_lo, f_hi, f2p,
         p2p) = run
        records, not_loaded = dataset_counts(con, run_id)
        unproven = f", {env_errors} environment error(s): unscored, the run is partial" if env_errors else ""
        summary.headline = (
            f"resolved {resolved} of {records} record(s); {not_loaded} not loaded, {invalid} invalid{unproven} · "
            f"{valid} valid instance(s) ({missing} without prediction, counted as 0): "
            f"resolved {resolved}/{valid} = {percent(r)} [{percent(r_lo)}, {percent(r_hi)}] · "
            f"patch apply {applied}/{valid} = {percent(a)} [{percent(a_lo)}, {percent(a_hi)}] · "
            f"fix rate {percent(fix)} [{percent(f_lo)}, {percent(f_hi)}] · F2P {percent(f2p)} · P2P {percent(p2p)}")
    has_view = con.execute("select count(*) from duckdb_views() where view_name = 'swe_evo_failure_modes'").fetchone()[0]
    if has_view:  # absent from a file last written by an older evoci
        modes = con.execute("select judge_model, label, instances, share from swe_evo_failure_modes "
                            "where run_id = ? order by judge_model, instances desc, label", [run_id]).fetchall()
        summary.failure_modes = " · ".join(f"{label or 'no valid label'} {n} ({percent(share)}, {model})"
                                           for model, label, n, share in modes)
    return summary


def print_swe_evo_report(db: Path, run_id: str, console: Console) -> None:
    with connect(db, read_only=True) as con:
        summary = load_summary(con, run_id)
    table = Table(title=f"run {run_id} — SWE-EVO", title_justify="left")
    for col in HEADER:
        table.add_column(col)
    for row in summary.rows:
        table.add_row(*(escape(str(cell)) for cell in row))  # reasons and ids are text, never markup
    console.print(table)
    if summary.headline:
        console.print(f"[bold]run[/]: {summary.headline}")
    if summary.failure_modes:
        console.print(f"[bold]failure modes[/] (LLM judge, unresolved instances): {summary.failure_modes}")
    console.print(f"query these numbers: evoci sql \"select * from swe_evo_runs where run_id = '{run_id}'\"", style="dim")


def publish_swe_evo(db: Path, run_id: str) -> None:
    """The run's table and headline as a markdown artifact on its flow run page; never raises."""
    try:
        from prefect.artifacts import create_markdown_artifact

        from evoci.artifacts import _table, artifact_key

        with reading(db) as con:
            summary = load_summary(con, run_id)
        parts = [f"# SWE-EVO run `{run_id}`", summary.headline, _table(HEADER, summary.rows)]
        if summary.failure_modes:
            parts.append(f"**Failure modes** (LLM judge): {summary.failure_modes}")
        parts.append(f"`evoci sql \"select * from swe_evo_instances where run_id = '{run_id}'\"`")
        create_markdown_artifact("\n\n".join(p for p in parts if p), key=artifact_key("swe-evo", run_id),
                                 description=f"SWE-EVO run {run_id}")
    except Exception as exc:  # an artifact is a view of the facts: never fail the run for it
        logging.getLogger("evoci.artifacts").warning("could not publish the SWE-EVO artifact of %s: %s", run_id, exc)
