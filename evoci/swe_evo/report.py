"""``evoci report`` for a SWE-EVO run: per instance, then the run's rates with 95 % intervals.

Every number is read from ``swe_evo_instances`` and ``swe_evo_runs``; this module only formats.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from evoci.digest import fmt
from evoci.store import connect


def percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def is_swe_evo_run(db: Path, run_id: str) -> bool:
    with connect(db, read_only=True) as con:
        row = con.execute("select protocol from runs where run_id = ?", [run_id]).fetchone()
    return bool(row) and row[0] == "swe-evo"


def print_swe_evo_report(db: Path, run_id: str, console: Console) -> None:
    with connect(db, read_only=True) as con:
        instances = con.execute(
            """select task_id, n_f2p, f2p_passed, n_p2p, p2p_passed, patch_applied, resolved, fix_rate, flags
               from swe_evo_instances where run_id = ? order by task_id""", [run_id]).fetchall()
        run = con.execute(
            """select valid_instances, invalid_instances, missing_predictions, resolved_instances, resolved_rate,
                      resolved_rate_low, resolved_rate_high, patches_applied, patch_apply_rate, patch_apply_rate_low,
                      patch_apply_rate_high, fix_rate, fix_rate_low, fix_rate_high, f2p_pass_rate, p2p_pass_rate
               from swe_evo_runs where run_id = ?""", [run_id]).fetchone()
    table = Table(title=f"run {run_id} — SWE-EVO", title_justify="left")
    for col in ("instance", "F2P passing", "P2P passing", "applied", "resolved", "fix rate", "flags"):
        table.add_column(col)
    for task_id, n_f2p, f2p, n_p2p, p2p, applied, resolved, fix, flags in instances:
        table.add_row(task_id, f"{f2p}/{n_f2p}", f"{p2p}/{n_p2p}", fmt(applied), fmt(resolved), fmt(fix),
                      ", ".join(flags or []))
    console.print(table)
    if run is None:
        return
    (valid, invalid, missing, resolved, r, r_lo, r_hi, applied, a, a_lo, a_hi, fix, f_lo, f_hi, f2p, p2p) = run
    console.print(
        f"[bold]run[/]: {valid} valid instance(s) ({invalid} invalid, {missing} without prediction, counted as 0) · "
        f"resolved {resolved}/{valid} = {percent(r)} [{percent(r_lo)}, {percent(r_hi)}] · "
        f"patch apply {applied}/{valid} = {percent(a)} [{percent(a_lo)}, {percent(a_hi)}] · "
        f"fix rate {percent(fix)} [{percent(f_lo)}, {percent(f_hi)}] · F2P {percent(f2p)} · P2P {percent(p2p)}"
    )
    with connect(db, read_only=True) as con:
        has_view = con.execute("select count(*) from duckdb_views() where view_name = 'swe_evo_failure_modes'").fetchone()[0]
        modes = con.execute("select judge_model, label, instances, share from swe_evo_failure_modes "
                            "where run_id = ? order by judge_model, instances desc, label",
                            [run_id]).fetchall() if has_view else []  # a file last written by an older evoci
    if modes:
        console.print("[bold]failure modes[/] (LLM judge, unresolved instances): " + " · ".join(
            f"{label or 'no valid label'} {n} ({percent(share)}, {model})" for model, label, n, share in modes))
    console.print(f"query these numbers: evoci sql \"select * from swe_evo_runs where run_id = '{run_id}'\"", style="dim")
