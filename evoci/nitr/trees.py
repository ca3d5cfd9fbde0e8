"""The two trees a NITR probe needs: the agent's workspace and the harness's grading tree.

The **workspace** is a fresh git repository holding only the probe's starter code (no TASK
file, no spec, no evaluator, no other probe): step k starts from step k − 1's commit and
is committed on top of it, so every step can be inspected and a resumed run finds it.

The **grading tree** is built by the harness for one grading and deleted afterwards:

    case/        the agent's code at the graded commit (exported from git: no .git, no .evoci)
    baseline/    the pristine starter code (for baseline_diff and frozen_paths)
    evaluator/   a copy of the probe's evaluator (pipeline.json, tests, checks, data)
    build/       the build folder of compiled probes
    third_party/ (one CMake project) an empty place where the sandbox mounts the checkout's
                 vendored dependencies read-only (``shared_folders``): never copied per grading

Grading never runs in the workspace, so nothing an agent leaves there (a conftest, a fake
test runner) can reach its grade, and the evaluator never appears where an agent looks.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
from pathlib import Path

import git

from evoci import treefs
from evoci.errors import SandboxError
from evoci.nitr.loader import CHECKOUT_SHARED, NitrProbe, starter_files
from evoci.workspace import Workspace

START_TAG = "step-0"


def create_workspace(path: Path, probe: NitrProbe) -> tuple[Workspace, str]:
    """Create (or reuse) the probe's workspace with its starter code; return it and step 0's SHA."""
    workspace = Workspace(path)
    found = workspace.tagged(START_TAG)
    if found:
        return workspace, found
    workspace.start_afresh()
    case_dir = Path(probe.case_dir)
    for rel in starter_files(case_dir):
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(case_dir / rel, path / rel)
    return workspace, workspace.init(START_TAG, f"evoci: {probe.probe_id} starter code", ignore=("__pycache__/",))


def export_commit(workspace: Path, sha: str, dest: Path) -> None:
    """Write the tree of commit ``sha`` (only what git tracks) into ``dest``."""
    buf = io.BytesIO()
    try:
        Workspace(workspace).repo.archive(buf, sha, format="tar")
    except git.GitCommandError as exc:
        raise SandboxError(f"cannot export commit {sha} of {workspace}: {exc} — delete the probe's run folder to start afresh") from exc
    buf.seek(0)
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=buf) as tar:
        tar.extractall(dest, filter=_inside)


def _inside(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    """tarfile's "data" filter, but a link out of the tree is left out instead of failing the export
    (the step node already removed and recorded such links; this is the last guard)."""
    try:
        return tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        return None


# Shared folders of a checkout built as one project that the sandbox mounts instead of copying:
# ~1,000 files of vendored code, read-only to every command, the same for every grading.
MOUNTED = ("third_party",)


def shared_folders(probe: NitrProbe) -> dict[str, Path]:
    """Place in the grading tree → checkout folder, for ``open_sandbox(..., shared=...)``."""
    if not probe.one_project:
        return {}
    return {rel: Path(probe.suite) / rel for rel in MOUNTED if (Path(probe.suite) / rel).is_dir()}


def build_grading_tree(root: Path, probe: NitrProbe, workspace: Path, sha: str) -> Path:
    """A fresh grading tree at ``root`` for commit ``sha`` of the probe's workspace.

    A probe of a checkout built as one CMake project gets the checkout's layout instead
    (``cases/<case>``, ``evaluator/<case>``, plus the project's shared files).
    """
    treefs.clear(root)  # the last step's tree: an agent's folders may be nested past shutil.rmtree's recursion
    root.mkdir(parents=True)
    places = probe.places()
    export_commit(workspace, sha, root / places["case_root"])
    case_dir = Path(probe.case_dir)
    for rel in starter_files(case_dir):
        (root / "baseline" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(case_dir / rel, root / "baseline" / rel)
    ignore = shutil.ignore_patterns("__pycache__", ".git")
    shutil.copytree(probe.evaluator_dir, root / places["evaluator_root"], ignore=ignore)
    (root / places["data_dir"]).mkdir(exist_ok=True)  # {data_dir} always names a folder
    if probe.one_project:
        for rel in CHECKOUT_SHARED:
            source = Path(probe.suite) / rel
            if rel in MOUNTED:
                (root / rel).mkdir(parents=True, exist_ok=True)  # where the sandbox mounts it
            elif source.is_dir():
                shutil.copytree(source, root / rel, ignore=ignore, dirs_exist_ok=True)
            elif source.is_file():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, root / rel)
    (root / "build").mkdir()
    return root


def restore_tree(root: Path, pristine: Path, keep: str) -> None:
    """Make the grading tree at ``root`` equal ``pristine`` again, all but the folder ``keep`` (the build's output).

    The tested code runs in ``root`` with write access (a C++ build needs it), so a module that ran
    it may have rewritten the evaluator, the baseline or the sources a later module reads. Each
    module starts from the tree as the harness built it; only the build folder carries over, as the
    modules need. Nothing is followed: what the code left at a name (a link, a fifo) is removed
    as such.
    """
    keep_parts = tuple(Path(keep).parts)

    def sync(parts: tuple[str, ...]) -> None:
        here = "/".join(parts)
        names = _names(root, here) | _names(pristine, here)
        for name in sorted(names):
            path = (*parts, name)
            rel = "/".join(path)
            if path == keep_parts:
                continue
            if keep_parts[:len(path)] == path and treefs.kind(root, rel) == "dir" \
                    and treefs.kind(pristine, rel) == "dir":
                sync(path)  # an ancestor of the build folder: keep the folder, restore what is beside it
                continue
            treefs.remove(root, rel)
            source = pristine / rel
            if source.is_symlink() or source.is_file():
                shutil.copy2(source, root / rel, follow_symlinks=False)
            elif source.is_dir():
                shutil.copytree(source, root / rel, symlinks=True)

    sync(())


def _names(tree: Path, rel: str) -> set[str]:
    if rel and treefs.kind(tree, rel) != "dir":
        return set()
    return set(os.listdir(tree / rel if rel else tree))
