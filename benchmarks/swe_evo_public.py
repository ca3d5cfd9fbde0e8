"""Measure: the public SWE-EVO records, unmodified, run offline from local clones — gold and empty baselines.

For each repository of the records folder (one run per repository, so a slow repository does not
hold back the table), this runs the real command twice:

    evoci run <records of that repository> --repos REPOS --agent gold  --home HOME --run-id public-gold-<repo>
    evoci run <records of that repository> --repos REPOS --agent empty --home HOME --run-id public-empty-<repo>

(the records are linked, never copied or edited, into one folder per repository under HOME), then
prints one Markdown row per record from the ``swe_evo_instances`` view: gold resolved, empty
resolved, the task status, and for every gold failure its reason (an ``environment_error``'s
message names the spec and the tests that did not pass on the clean base). Records that do not
load (for instance, a repository that is not in REPOS) are listed with the loader's reason.
Environments are built once per spec and reused (HOME/envs), and each environment is proven on
the clean base once per home, so the empty run re-uses the gold run's proofs.

    .venv/bin/python benchmarks/swe_evo_public.py --records RECORDS_DIR --repos CLONES_DIR \\
        --home HOME [--only dvc,requests] [--table-only]

The records folder holds ``<instance_id>.json`` files as published; CLONES_DIR holds
``<owner>__<name>`` clones (bare or not) holding every base commit.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", required=True, type=Path)
    parser.add_argument("--repos", required=True, type=Path)
    parser.add_argument("--home", required=True, type=Path)
    parser.add_argument("--only", default="", help="comma-separated repository names (the part after '/')")
    parser.add_argument("--environments", help="a spec side file, passed on to evoci run")
    parser.add_argument("--test-timeout", default="1800")
    parser.add_argument("--table-only", action="store_true", help="print the table from what HOME holds; run nothing")
    args = parser.parse_args()
    groups = _by_repository(args.records)
    only = {name for name in args.only.split(",") if name}
    for repo, files in groups.items():
        if (only and repo.split("/")[-1] not in only) or args.table_only:
            continue
        folder = _link_folder(args.home / "records" / repo.replace("/", "__"), files)
        for agent in ("gold", "empty"):
            command = [str(Path(sys.executable).parent / "evoci"), "run", str(folder), "--repos", str(args.repos),
                       "--agent", agent, "--home", str(args.home), "--run-id", _run_id(agent, repo),
                       "--concurrency", "1", "--test-timeout", args.test_timeout]
            if args.environments:
                command += ["--environments", args.environments]
            start = time.monotonic()
            # Prefect's temporary server may start slowly on a busy machine: wait for it rather than fail.
            env = {"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "900", **os.environ}
            done = subprocess.run(command, capture_output=True, text=True, env=env)
            (args.home / "logs").mkdir(parents=True, exist_ok=True)
            (args.home / "logs" / f"{_run_id(agent, repo)}.log").write_text(done.stdout + done.stderr)
            print(f"{repo} {agent}: exit {done.returncode} in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    _print_table(args.home, groups)


def _by_repository(records: Path) -> dict[str, list[Path]]:
    groups: dict[str, list[Path]] = {}
    for path in sorted(records.glob("*.json")):
        repo = json.loads(path.read_text()).get("repo", "?")
        groups.setdefault(str(repo), []).append(path)
    return groups


def _link_folder(folder: Path, files: list[Path]) -> Path:
    """The repository's records as symbolic links: the files stay byte for byte as published."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in files:
        link = folder / path.name
        if not link.is_symlink():
            link.symlink_to(path.absolute())
    return folder


def _run_id(agent: str, repo: str) -> str:
    return f"public-{agent}-{repo.split('/')[-1]}"


def _print_table(home: Path, groups: dict[str, list[Path]]) -> None:
    db = home / "evoci.duckdb"
    rows: dict[tuple[str, str], dict] = {}
    reasons: dict[tuple[str, str], str] = {}
    skipped: dict[tuple[str, str], str] = {}
    if db.exists():
        with duckdb.connect(str(db), read_only=True) as con:
            query = ("select i.run_id, i.task_id, i.resolved, i.task_status, i.flags, t.reason "
                     "from swe_evo_instances i join tasks t using (run_id, task_id)")
            for run_id, task_id, resolved, status, flags, reason in con.execute(query).fetchall():
                rows[(run_id, task_id)] = dict(resolved=resolved, status=status, flags=flags)
                reasons[(run_id, task_id)] = reason or ""
            for run_id, message in con.execute("select run_id, message from failures where node = 'dataset'").fetchall():
                skipped[(run_id, message.split("'")[1] if "'" in message else message)] = message
    print("| instance | gold resolved | empty resolved | gold: status, and why not resolved |")
    print("|---|---|---|---|")
    totals = {"gold": 0, "empty": 0, "measured": 0}
    for repo, files in groups.items():
        for path in files:
            iid = path.stem
            gold, empty = rows.get((_run_id("gold", repo), iid)), rows.get((_run_id("empty", repo), iid))
            if gold is None:
                why = next((m for (r, i), m in skipped.items() if r == _run_id("gold", repo) and i == iid), "not run")
                print(f"| {iid} | — | — | not measured: {_short(why)} |")
                continue
            totals["measured"] += 1
            totals["gold"] += bool(gold["resolved"])
            totals["empty"] += bool(empty and empty["resolved"])
            why = "" if gold["resolved"] else _short(reasons.get((_run_id("gold", repo), iid)) or ", ".join(gold["flags"]))
            print(f"| {iid} | {_yes(gold['resolved'])} | {_yes(empty['resolved']) if empty else '—'} | "
                  f"{gold['status']}{': ' + why if why else ''} |")
    total = sum(len(f) for f in groups.values())
    print(f"| **{total} records, {totals['measured']} measured** | **{totals['gold']}** | **{totals['empty']}** | |")


def _yes(value) -> str:
    return "yes" if value else "no"


def _short(text: str, limit: int = 320) -> str:
    text = str(text).split("; output ends:")[0].replace("the test environment is not proven on the clean base: ", "")
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


if __name__ == "__main__":
    main()
