"""Load NITR probes from a checkout in the public layout (evoci's own suite uses it too).

    cases/<NNN>.<slug>/                starter code + TASK.md (micro) or TASK1.md … TASKn.md
    docs/<NNN>.<slug>/SPEC.md          the hidden spec (never shown to an agent)
    docs/design_matrix.md              the table giving each case's primary dimension and granularity
    evaluator/<NNN>.<slug>/            pipeline.json, tests/, checks/, data/ (hidden)

A folder may also be named by its slug alone.

Two ways to build and test a probe. *Self-contained*: its pipeline's commands do everything
(evoci's own probes: a unittest script, or a CMake project in the evaluator folder). *One
CMake project* (``cases/CMakeLists.txt`` and ``evaluator/CMakeLists.txt`` exist, as in the
public suite): the checkout's top-level project registers every case's tests, so grading
places the case at ``cases/<case>`` and its evaluator at ``evaluator/<case>`` beside the
project's shared files (``CHECKOUT_SHARED``) and configures it for that one case first. A case that cannot be used (no TASK file,
a gap in TASK1..n, no evaluator, a bad pipeline.json, no design-matrix row) becomes an
InputError naming it; the other cases still load. A probe's identity is the content of its
starter code, TASK files, spec and evaluator: a changed probe never merges into old results.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evoci.errors import InputError
from evoci.names import check_name
from evoci.nitr.pipeline import PLACEHOLDERS, Module, Pipeline, load_pipeline

CPP_SUFFIXES = (".cc", ".cpp", ".cxx", ".h", ".hpp")
# The files a checkout built as one CMake project shares between its cases.
CHECKOUT_SHARED = ("CMakeLists.txt", "cases/CMakeLists.txt", "evaluator/CMakeLists.txt", "evaluator/cmake",
                   "evaluator/shared", "third_party")
CHECKOUT_MARKERS = ("cases/CMakeLists.txt", "evaluator/CMakeLists.txt")
CONFIGURE = "evoci_configure_checkout"  # the harness's own module: configures the project for one case
_ROW = re.compile(r"^\|\s*(\d{3})\s+([^|]+?)\s*\|\s*(D[1-9])\b[^|]*\|\s*(micro|multi-step)\s*\|", re.M)
_TASK = re.compile(r"^TASK(\d*)\.md$")


class NitrProbe(BaseModel):
    """One NITR case, as the flow needs it (small and serialisable: a Prefect parameter)."""

    model_config = ConfigDict(frozen=True)

    probe_id: str  # the case folder's name, e.g. "001.invoice-summary-reuse"
    language: str  # "python" | "cpp"
    dimension: str  # "D1".."D9"
    granularity: str  # "micro" | "multi-step"
    steps: int  # number of TASK files
    suite: str  # the checkout's root folder
    case_dir: str
    evaluator_dir: str
    spec_path: str | None
    pipeline: Pipeline
    content_hash: str  # identity: starter code, TASKs, spec and evaluator (and the shared project files)
    one_project: bool = False  # the checkout builds as one CMake project (see the module docstring)

    def places(self) -> dict[str, str]:
        """Where the pipeline's placeholders point in this probe's grading tree (relative to its root)."""
        if not self.one_project:
            return dict(PLACEHOLDERS)
        evaluator = f"evaluator/{Path(self.evaluator_dir).name}"
        return {**PLACEHOLDERS, "case_root": f"cases/{self.probe_id}", "evaluator_root": evaluator,
                "data_dir": f"{evaluator}/data"}

    def grading_pipeline(self) -> Pipeline:
        """The pipeline, preceded (one CMake project) by configuring the project for this case alone."""
        if not self.one_project:
            return self.pipeline
        builds = [m for m in self.pipeline.modules if m.module_name == "build"]
        args = builds[0].configure_args(self.places()) if builds else ["-DNITR_BUILD_EVALUATOR=ON"]
        configure = Module(module_name="build", name=CONFIGURE, command=(
            "cmake", "-S", ".", "-B", "{build_dir}", "-DNITR_BUILD_ALL_CASES=OFF", f"-DNITR_CASE={self.probe_id}", *args))
        return self.pipeline.model_copy(update={"modules": (configure, *self.pipeline.modules)})

    def task_file(self, step: int) -> Path:
        """TASK.md for a micro probe, TASK<step>.md for a multi-step one."""
        name = "TASK.md" if self.granularity == "micro" and self.steps == 1 else f"TASK{step}.md"
        return Path(self.case_dir) / name

    def task_text(self, step: int) -> str:
        return self.task_file(step).read_text(errors="replace")


@dataclass
class NitrSuite:
    name: str
    probes: list[NitrProbe] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)


def is_task_file(name: str) -> bool:
    return bool(_TASK.match(name))


def starter_files(case_dir: Path) -> list[Path]:
    """The starter code an agent may see: the case folder without its TASK files (relative paths)."""
    return sorted(p.relative_to(case_dir) for p in case_dir.rglob("*")
                  if p.is_file() and not is_task_file(p.name) and "__pycache__" not in p.parts)


def design_matrix(path: Path) -> dict[str, tuple[str, str]]:
    """Case number → (dimension, granularity), from the design-matrix table."""
    if not path.is_file():
        return {}
    return {m.group(1): (m.group(3), m.group(4)) for m in _ROW.finditer(path.read_text(errors="replace"))}


def _steps(case_dir: Path) -> int:
    numbers = sorted(int(m.group(1) or 0) for p in case_dir.iterdir() if (m := _TASK.match(p.name)))
    if not numbers:
        raise InputError(f"case {case_dir.name}: no TASK.md or TASK1.md — every case needs its task text")
    if numbers == [0]:
        return 1
    if 0 in numbers:
        raise InputError(f"case {case_dir.name}: has both TASK.md and TASKk.md — keep one form")
    if numbers != list(range(1, len(numbers) + 1)):
        raise InputError(f"case {case_dir.name}: TASK files {numbers} have a gap — number them TASK1.md … TASKn.md")
    return len(numbers)


def _named(folder: Path, case: str) -> Path | None:
    slug = case.split(".", 1)[-1]
    for name in (case, slug):
        if (folder / name).is_dir():
            return folder / name
    return None


def _content_hash(*roots: Path) -> str:
    digest = hashlib.sha256()
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def runs_ctest(pipeline: Pipeline) -> bool:
    return any(m.module_name == "unit_test" and m.command and Path(m.argv()[0]).name == "ctest" for m in pipeline.modules)


def configures(pipeline: Pipeline) -> bool:
    """Whether a build module configures CMake (itself, or by the pipeline's top-level build_dir)."""
    builds = [m.argv() for m in pipeline.modules if m.module_name == "build"]
    return bool(builds) and (pipeline.configures_build or any(
        Path(argv[0]).name == "cmake" and ("-S" in argv or "-B" in argv) for argv in builds))


def is_one_project(suite: Path) -> bool:
    return all((suite / marker).is_file() for marker in CHECKOUT_MARKERS)


def _shared_hash(suite: Path) -> str:
    """Identity of the project files every case shares (third_party is left out: large, and vendored)."""
    roots = [suite / p for p in CHECKOUT_SHARED if p != "third_party" and (suite / p).exists()]
    return _content_hash(*roots) if roots else ""


def load_probe(suite: Path, case_dir: Path, matrix: dict[str, tuple[str, str]], shared: str = "") -> NitrProbe:
    case = check_name(case_dir.name, "NITR case folder")  # a probe id is a folder name in every run
    number = case.split(".", 1)[0]
    if number not in matrix:
        raise InputError(f"case {case}: no row for {number} in docs/design_matrix.md — add its dimension and granularity")
    dimension, granularity = matrix[number]
    steps = _steps(case_dir)
    evaluator = _named(suite / "evaluator", case)
    if evaluator is None:
        raise InputError(f"case {case}: no evaluator/{case}/ folder — the probe cannot be graded")
    pipeline: Pipeline = load_pipeline(evaluator / "pipeline.json")
    if not shared and runs_ctest(pipeline) and not configures(pipeline):
        raise InputError(f"case {case}: evaluator/{evaluator.name}/pipeline.json runs ctest, but no module configures "
                         "the build folder — add a build module running `cmake -S … -B {build_dir}`, or a "
                         "top-level build_dir with a build module")
    docs = _named(suite / "docs", case)
    spec = docs / "SPEC.md" if docs and (docs / "SPEC.md").is_file() else None
    language = "cpp" if any(p.suffix in CPP_SUFFIXES for p in starter_files(case_dir)) else "python"
    roots = [case_dir, evaluator] + ([spec] if spec else [])
    return NitrProbe(probe_id=case, language=language, dimension=dimension, granularity=granularity, steps=steps,
                     suite=str(suite), case_dir=str(case_dir), evaluator_dir=str(evaluator),
                     spec_path=str(spec) if spec else None, pipeline=pipeline,
                     content_hash=_content_hash(*roots) + shared[:8], one_project=bool(shared))


def _selected(probe: NitrProbe, select: dict[str, list[str]]) -> bool:
    number = probe.probe_id.split(".", 1)[0]
    checks = {
        "id": lambda v: v in (probe.probe_id, number, probe.probe_id.split(".", 1)[-1]),
        "language": lambda v: v == probe.language,
        "dimension": lambda v: v.upper() == probe.dimension,
        "granularity": lambda v: v == probe.granularity,
    }
    return all(any(checks[key](v) for v in values) for key, values in select.items())


SELECT_KEYS = ("id", "language", "dimension", "granularity")


def load_suite(root: Path | str, select: dict[str, list[str]] | None = None) -> NitrSuite:
    """Every usable case under ``root`` that matches ``select`` (key → accepted values)."""
    root = Path(root).absolute()
    select = {k: v for k, v in (select or {}).items() if v}
    unknown = sorted(set(select) - set(SELECT_KEYS))
    if unknown:
        raise InputError(f"unknown NITR selection {', '.join(unknown)} — choose from: {', '.join(SELECT_KEYS)}")
    if not (root / "cases").is_dir():
        raise InputError(f"{root} has no cases/ folder — pass the root of a NITR checkout (cases/, docs/, evaluator/)")
    matrix = design_matrix(root / "docs" / "design_matrix.md")
    shared = _shared_hash(root) if is_one_project(root) else ""
    suite = NitrSuite(name=root.name)
    for case_dir in sorted(p for p in (root / "cases").iterdir() if p.is_dir()):
        try:
            probe = load_probe(root, case_dir, matrix, shared)
        except InputError as exc:
            suite.errors.append(exc)
            continue
        if _selected(probe, select):
            suite.probes.append(probe)
    return suite
