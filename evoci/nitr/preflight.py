"""Before any agent of a run is graded on a probe: can this sandbox build and test it at all?

A host (or image) without CMake, a C++ compiler or GoogleTest, or a checkout whose
``third_party/googletest`` submodule was never fetched, would otherwise make every C++
probe a build error (E), the reference solution included, and the run would look complete.
The preflight proves the toolchain the way grading will use it: every program the
pipeline's commands start must exist in the sandbox, and the project's CMake configure
step (the harness's own for a checkout built as one project, the pipeline's own
``cmake -S/-B`` build module, or the implicit one of a top-level ``build_dir``) must succeed
on the pristine starter code. A failure is ``NitrEnvironmentError``: an infrastructure
error (retried, never scored), recorded as the probe's ``environment_error`` with what to
install. Nothing of an agent's takes part, so nothing an agent writes can cause it.

The configured build folder it leaves is kept as the probe's **build template**
(``keep_template``), with the checkout's own GoogleTest compiled in it when the project
builds it from ``third_party``: every later grading of the probe in the run starts from a
copy, so only the agent's code is compiled. It holds nothing but the pristine starter's
configuration and the harness's dependencies, and each grading gets a fresh copy: nothing
one grading (or agent) leaves reaches another. CMake records absolute paths, so the
template is only valid for a grading tree at the same place (``tasks.nitr`` grades each
probe in one fixed folder, attempts and steps one after another).
"""

from __future__ import annotations

import shutil
from pathlib import Path, PurePosixPath

from evoci.errors import InfrastructureError
from evoci.nitr.loader import CONFIGURE, NitrProbe
from evoci.nitr.trees import build_grading_tree, create_workspace
from evoci.sandbox.base import Sandbox

INSTALL = ("install CMake, a C++ compiler and GoogleTest where grading runs (on a Debian host "
           "`bash scripts/cpp-tools.sh`: cmake g++ make libgtest-dev; in Docker, evoci's C++ image or an image with them); "
           "a NITR checkout also needs its submodules (`git submodule update --init`: third_party/googletest)")
TIMEOUT_S = 600.0
PREBUILT = ("gtest", "gtest_main")  # targets of a vendored GoogleTest (the public suite's third_party)
TAIL = 1500


class NitrEnvironmentError(InfrastructureError):
    """The sandbox cannot build or test this probe, whatever an agent writes: not the agent's outcome."""


def _configure_step(probe: NitrProbe) -> list[str] | None:
    """The argv that configures the probe's CMake project, as grading will run it; None if nothing does."""
    places = probe.places()
    modules = probe.grading_pipeline().modules
    for module in (m for m in modules if m.command):
        argv = module.argv(places)
        if module.name == CONFIGURE or (PurePosixPath(argv[0]).name == "cmake" and ("-S" in argv or "-B" in argv)):
            return argv
    builds = [m for m in modules if m.module_name == "build"]
    if probe.pipeline.configures_build and builds:
        return ["cmake", "-S", places["repo_root"], "-B", places["build_dir"], *builds[0].configure_args(places)]
    return None


def _programs(probe: NitrProbe) -> list[str]:
    places = probe.places()
    return sorted({m.argv(places)[0] for m in probe.grading_pipeline().modules if m.command and "/" not in m.argv(places)[0]})


def check(probe: NitrProbe, sandbox: Sandbox, root: Path) -> None:
    """Raise NitrEnvironmentError unless ``sandbox`` (over the pristine tree at ``root``) has what grading needs."""
    for program in _programs(probe):
        found = sandbox.exec(["sh", "-c", 'command -v "$0"', program], timeout=30)
        if not found.ok:
            raise NitrEnvironmentError(f"probe {probe.probe_id}: grading runs {program!r}, which the sandbox does not "
                                       f"have — {INSTALL}")
    argv = _configure_step(probe)
    if argv is None:
        return
    result = sandbox.exec(argv, timeout=TIMEOUT_S)
    if not result.ok:
        said = (result.stdout + "\n" + result.stderr).strip()[-TAIL:]
        raise NitrEnvironmentError(f"probe {probe.probe_id}: its CMake project does not configure on the pristine "
                                   f"starter code (`{' '.join(argv)}` exited {result.exit_code}) — {INSTALL}\n{said}")


def pristine_tree(probe: NitrProbe, root: Path, scratch: Path) -> Path:
    """A grading tree of the starter code at ``root`` (its workspace repository in ``scratch``), made afresh."""
    shutil.rmtree(scratch, ignore_errors=True)
    workspace, sha = create_workspace(scratch / "workspace", probe)
    return build_grading_tree(root, probe, workspace.path, sha)


def keep_template(probe: NitrProbe, sandbox: Sandbox, root: Path, template: Path) -> None:
    """Move the pristine tree's configured build folder to ``template``, GoogleTest compiled if the project builds it."""
    build = probe.places()["build_dir"]
    if not (root / build / "CMakeCache.txt").is_file():
        return
    listed = sandbox.exec(["cmake", "--build", build, "--target", "help"], timeout=60)
    targets = [t for t in PREBUILT if f"... {t}" in listed.stdout]
    if targets:  # an optimisation only: a failure leaves them to be built by the grading itself
        sandbox.exec(["cmake", "--build", build, "--target", *targets], timeout=TIMEOUT_S)
    shutil.rmtree(template, ignore_errors=True)
    shutil.move(str(root / build), template)


def use_template(template: Path, root: Path, probe: NitrProbe) -> None:
    """Start the grading tree's build folder from a copy of the template (timestamps kept: nothing rebuilds)."""
    if template.is_dir():
        build = root / probe.places()["build_dir"]
        shutil.rmtree(build, ignore_errors=True)
        shutil.copytree(template, build, symlinks=True)
