"""Does evoci judge a NITR release as NITR's own evaluator does? Both run, module by module.

``evoci nitr conformance CHECKOUT`` grades, with both evaluators, every case's starter code
(what an agent that changes nothing leaves) and every submission fixture the checkout ships
(``evaluator/shared/module/testdata/submission_pipeline/manifest.json``):

- **official**: the checkout's ``evaluator/run_evaluation_pipeline.py``, run with the user's
  Python in a copy of the checkout (the checkout itself is never written), as its README
  says: the project configured once with ``-DNITR_BUILD_EVALUATOR=ON`` for the starters; a
  fixture through ``--override case_root=…`` (the evaluator stages its own copy);
- **evoci**: what the preflight and the grade node do: the probe's preflight (configure the
  pristine starter, keep the build template), then per grading a workspace holding the
  starter (and the fixture's files, committed as an agent would leave them), a grading
  tree starting from the template, the local sandbox.

Modules are matched by position and name (evoci's own configure step is not compared); a
difference is a module one side passed and the other failed, or one only one side ran.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from evoci.domain import EnvironmentSpec, SandboxConfig
from evoci.nitr import preflight
from evoci.nitr.evaluator import evaluate
from evoci.nitr.loader import CONFIGURE, NitrProbe, is_task_file, load_suite
from evoci.nitr.trees import build_grading_tree, create_workspace, shared_folders
from evoci.sandbox import open_sandbox
from evoci.settings import Paths

FIXTURES = Path("evaluator/shared/module/testdata/submission_pipeline")
_SKIP = shutil.ignore_patterns(".git", "build", "__pycache__", ".submit-output", "submit-output")


@dataclass
class Verdicts:
    """One side's module verdicts, in order: (module_name, name) → passed."""

    modules: list[tuple[str, str, bool]] = field(default_factory=list)
    error: str | None = None

    @property
    def category(self) -> str:
        if self.error:
            return "error"
        if any(kind == "build" and not ok for kind, _, ok in self.modules):
            return "E"
        functional = all(ok for kind, _, ok in self.modules if kind == "unit_test")
        structural = all(ok for kind, _, ok in self.modules if kind not in ("build", "unit_test"))
        return {(True, True): "Pass", (False, True): "F", (True, False): "S", (False, False): "B"}[(functional, structural)]


@dataclass
class Comparison:
    label: str  # "<case>" or "<case> @ <fixture backend>"
    official: Verdicts
    evoci: Verdicts
    official_s: float = 0.0  # wall seconds of the official evaluator's run
    evoci_s: float = 0.0  # wall seconds of evoci's grading (the preflight, once per case, not included)

    def differences(self) -> list[str]:
        if self.official.error or self.evoci.error:
            return [f"could not compare: {self.official.error or self.evoci.error}"]
        ours = {(k, n): ok for k, n, ok in self.evoci.modules}
        theirs = {(k, n): ok for k, n, ok in self.official.modules}
        out = []
        for key in dict.fromkeys([*theirs, *ours]):
            a, b = theirs.get(key), ours.get(key)
            if a != b:
                word = {True: "passed", False: "failed", None: "not run"}
                out.append(f"{key[0]}:{key[1]}  official {word[a]}, evoci {word[b]}")
        return out


def run_official(checkout: Path, case: str, case_root: Path, python: str, timeout: float) -> Verdicts:
    argv = [python, str(checkout / "evaluator" / "run_evaluation_pipeline.py"),
            str(checkout / "evaluator" / case / "pipeline.json"), "--case_root", str(case_root),
            "--baseline_case_root", str(checkout / "cases" / case), "--build_dir", str(checkout / "build"),
            "--evaluator_root", str(checkout / "evaluator" / case)]  # else {evaluator_root} expands to ""
    done = subprocess.run(argv, cwd=checkout, capture_output=True, text=True, timeout=timeout, check=False)
    try:
        payload = json.loads(done.stdout)
    except json.JSONDecodeError:
        return Verdicts(error=f"the official evaluator printed no JSON (exit {done.returncode}): {done.stderr[-300:]}")
    return Verdicts([(m["module_name"], m["name"], bool(m["passed"])) for m in payload["module_results"]])


def run_evoci(probe: NitrProbe, work: Path, fixture: Path | None, timeout: float) -> Verdicts:
    """What the grade node does, in the probe's one grading folder ``work`` (after ``run_preflight``)."""
    paths = Paths(home=work / "home")
    shutil.rmtree(work / "workspace", ignore_errors=True)
    workspace, sha = create_workspace(work / "workspace", probe)
    if fixture is not None:  # the agent's tree becomes the fixture's (its TASK files are never part of it)
        for path in workspace.path.rglob("*"):
            if path.is_file() and ".git" not in path.relative_to(workspace.path).parts:
                path.unlink()
        for path in fixture.rglob("*"):
            if path.is_file() and not is_task_file(path.name):
                (workspace.path / path.relative_to(fixture)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, workspace.path / path.relative_to(fixture))
        sha = workspace.commit(1, "the fixture's code")
    tree = build_grading_tree(work / "tree", probe, workspace.path, sha)
    preflight.use_template(work / "build-template", tree, probe)
    sandbox = open_sandbox(SandboxConfig(), tree, EnvironmentSpec(), paths, shared=shared_folders(probe))
    try:
        grade = evaluate(probe.grading_pipeline(), sandbox, tree, ceiling_s=timeout, places=probe.places())
    except Exception as exc:  # reported as a difference, with what went wrong
        return Verdicts(error=f"evoci: {type(exc).__name__}: {exc}")
    finally:
        sandbox.cleanup()
    return Verdicts([(m.module_name, m.name, m.passed) for m in grade.modules if m.name != CONFIGURE])


def run_preflight(probe: NitrProbe, work: Path) -> str | None:
    """The grade node's preflight and build template for ``probe`` in ``work``; what failed, if it did."""
    root = preflight.pristine_tree(probe, work / "tree", work / "starter")
    sandbox = open_sandbox(SandboxConfig(), root, EnvironmentSpec(), Paths(home=work / "home"),
                           shared=shared_folders(probe))
    try:
        preflight.check(probe, sandbox, root)
        preflight.keep_template(probe, sandbox, root, work / "build-template")
    except preflight.NitrEnvironmentError as exc:
        return str(exc)
    finally:
        sandbox.cleanup()
    return None


def fixtures(checkout: Path) -> list[tuple[str, str, Path]]:
    """(case, backend, folder) of every submission fixture the checkout's manifest lists."""
    manifest = checkout / FIXTURES / "manifest.json"
    if not manifest.is_file():
        return []
    samples = json.loads(manifest.read_text()).get("samples", [])
    return [(s["case_slug"], s["backend"], checkout / FIXTURES / s["backend"] / "cases" / s["case_slug"])
            for s in samples]


def official_copy(checkout: Path, dest: Path) -> Path:
    """A copy of the checkout for the official evaluator, its CMake project configured once (as its README says)."""
    shutil.copytree(checkout, dest, ignore=_SKIP, symlinks=True)
    configured = subprocess.run(["cmake", "-S", str(dest), "-B", str(dest / "build"), "-DNITR_BUILD_EVALUATOR=ON"],
                                capture_output=True, text=True, check=False)
    if configured.returncode != 0:
        raise RuntimeError(f"cannot configure the checkout's CMake project: {configured.stderr[-500:]}")
    return dest


def compare(checkout: Path, *, python: str = "python3", select: dict[str, list[str]] | None = None,
            timeout: float = 1800, progress=print) -> tuple[list[Comparison], list[str]]:
    """Every comparison, and the cases evoci could not load (each a difference too)."""
    checkout = checkout.absolute()
    suite = load_suite(checkout, select)
    with tempfile.TemporaryDirectory(prefix="evoci-nitr-conformance-") as tmp:
        copy = official_copy(checkout, Path(tmp) / "official")
        probes = {p.probe_id: p for p in suite.probes}
        jobs = [(p.probe_id, None, None) for p in suite.probes]
        jobs += [(case, backend, folder) for case, backend, folder in fixtures(copy) if case in probes]
        results: list[Comparison] = []
        for case in dict.fromkeys(case for case, _, _ in jobs):
            work = Path(tmp) / "evoci" / case
            failed = run_preflight(probes[case], work)
            for _, backend, folder in [job for job in jobs if job[0] == case]:
                label = case if backend is None else f"{case} @ {backend}"
                t0 = time.perf_counter()
                official = run_official(copy, case, folder or copy / "cases" / case, python, timeout)
                t1 = time.perf_counter()
                ours = Verdicts(error=failed) if failed else run_evoci(probes[case], work, folder, timeout)
                results.append(Comparison(label, official, ours, t1 - t0, time.perf_counter() - t1))
                progress(render_one(results[-1]))
            shutil.rmtree(work, ignore_errors=True)
    return results, [str(e) for e in suite.errors]


def render_one(c: Comparison) -> str:
    diffs = c.differences()
    head = f"{c.label:60} official {c.official.category:5} evoci {c.evoci.category:5} "
    head += f"{len(c.official.modules)} module(s), " + (f"{len(diffs)} difference(s)" if diffs else "same")
    head += f"  ({c.official_s:.1f} s / {c.evoci_s:.1f} s)"
    return "\n".join([head, *(f"    {d}" for d in diffs)])


def summary(results: list[Comparison], unloaded: list[str]) -> str:
    modules = sum(len(c.official.modules) for c in results)
    diffs = sum(len(c.differences()) for c in results) + len(unloaded)
    categories = sum(1 for c in results if c.official.category != c.evoci.category)
    lines = [f"unloaded by evoci: {u}" for u in unloaded]
    lines.append(f"{len(results)} grading(s), {modules} official module verdict(s): {diffs} module difference(s), "
                 f"{categories} category difference(s)")
    return "\n".join(lines)
