"""What evoci's NITR grading costs, against NITR's own evaluator grading the same code.

For each selected case of a NITR checkout (by default two C++ and two Python cases), its
starter code (what an agent that changes nothing leaves) is graded again and again:

- **official**: ``evaluator/run_evaluation_pipeline.py`` from the checkout, with the user's
  Python, in a copy of the checkout whose CMake project is configured once (as its README
  says, and as ``evoci nitr conformance`` runs it): per case it builds that case's targets
  and runs its modules; before each timed run the case's files are touched (untimed), so
  its build recompiles them as it would an agent's new code (GoogleTest stays built);
- **evoci**: the grade node's work (``evoci.nitr.conformance.run_evoci``): a workspace
  commit, a fresh grading tree whose build folder starts from the probe's build template,
  every module through the local sandbox. The probe's preflight (configure the pristine
  starter, compile the checkout's GoogleTest into the template) runs once per probe and
  run, before any agent is graded, and is reported on its own.

Each number is the median of ``--repeats`` gradings after one warm-up.

    .venv/bin/python benchmarks/nitr_grading.py CHECKOUT [--select id=001,008,026,030] [--repeats 3]

Goal: evoci ÷ official ≤ 1.2 for C++ and for Python (the medians' ratio over the cases of each language).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from evoci.cli_common import selection
from evoci.nitr.conformance import official_copy, run_evoci, run_official, run_preflight
from evoci.nitr.loader import load_suite

GOAL = 1.2


def timed(fn, repeats: int, setup=lambda: None) -> tuple[float, object]:
    setup()
    result = fn()  # warm-up
    times = []
    for _ in range(repeats):
        setup()  # untimed
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def touch(case: Path) -> None:
    """New code to grade, as an agent's would be: the official build recompiles the case (its project stays configured)."""
    for path in case.rglob("*"):
        if path.is_file():
            path.touch()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--select", action="append", help="KEY=VALUE, as for `evoci run` (default: id=001,008,026,030)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--python", default="python3")
    args = parser.parse_args(argv)
    select = selection(args.select or ["id=001,008,026,030"])
    probes = load_suite(args.checkout.absolute(), select).probes
    totals: dict[str, list[float]] = {"cpp": [0.0, 0.0], "python": [0.0, 0.0]}
    with tempfile.TemporaryDirectory(prefix="nitr-bench-") as tmp:
        copy = official_copy(args.checkout.absolute(), Path(tmp) / "official")
        print(f"{'case':48} {'preflight s':>11} {'official s':>10} {'evoci s':>8} {'ratio':>6}  verdicts")
        for probe in probes:
            work = Path(tmp) / "evoci" / probe.probe_id
            t0 = time.perf_counter()
            failed = run_preflight(probe, work)
            if failed:
                print(f"{probe.probe_id:48} preflight failed: {failed.splitlines()[0]}")
                continue
            once = time.perf_counter() - t0
            theirs, official = timed(lambda: run_official(copy, probe.probe_id, copy / "cases" / probe.probe_id,
                                                          args.python, 1800), args.repeats,
                                     setup=lambda: touch(copy / "cases" / probe.probe_id))
            ours, verdicts = timed(lambda: run_evoci(probe, work, None, 1800), args.repeats)
            same = "same" if official.modules == verdicts.modules else "DIFFER"
            totals[probe.language][0] += theirs
            totals[probe.language][1] += ours
            print(f"{probe.probe_id:48} {once:11.1f} {theirs:10.2f} {ours:8.2f} {ours / theirs:6.2f}  {same}")
    worst = 0.0
    for language, (theirs, ours) in totals.items():
        if theirs:
            worst = max(worst, ours / theirs)
            print(f"{language}: evoci {ours:.2f} s ÷ official {theirs:.2f} s = {ours / theirs:.2f} (goal ≤ {GOAL:g})")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
