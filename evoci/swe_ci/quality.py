"""Static code quality of one codebase: radon's maintainability index and cyclomatic
complexity, a pylint score, and its changed lines against the base.

SWE-CI (§4.4, Observations 5 and 6) compares the agent's final code with the human oracle
on Pylint score, MI and changed lines. evoci measures the base, every iteration and the
oracle the same way, so the views can compare any of them with the oracle.

What is measured: the Python files of the committed tree outside the tests folder (the
tests are the oracle's in every iteration, so they say nothing about the agent). The tree
is the harness's own copy of a commit (never the agent's work tree), and neither tool runs
its code: radon parses it in this process; pylint runs in a child process with evoci's own
settings (``--rcfile`` set, so a ``pylintrc``, ``setup.cfg`` or ``pyproject.toml`` in the
tree cannot load plugins or run an ``init-hook``), its persistent statistics off.

Aggregates over files (the paper does not say how it aggregates; these are stated here and
in ``sql/schema.sql``): MI is the SLOC-weighted mean of radon's per-file MI (``multi=True``,
radon's default); complexity is the mean and the maximum of radon's per-block cyclomatic
complexity (functions, methods, classes); the pylint score is pylint's own global score
``max(0, 10 − 10·(5·error + warning + refactor + convention) / statements)``, 0 with a fatal message.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import tempfile
import threading
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from radon.complexity import cc_visit
from radon.metrics import mi_visit
from radon.raw import analyze

from evoci import treefs
from evoci.sandbox.process import run_process

# Bumped when what is measured changes, so cached measurements are not reused.
QUALITY_VERSION = 1
# pylint on a large repository takes a while; past this it is recorded as an error.
PYLINT_TIMEOUT_S = 900.0
# CPython 3.11 keeps the AST constructor's recursion counter per interpreter, not per thread
# (gh-106905): two quality nodes parsing at once fail with "AST constructor recursion depth mismatch".
_PARSE_LOCK = threading.Lock()
_PYLINT_ARGS = ("--persistent=n", "--jobs=1", "--output-format=json2", "--score=y", "--exit-zero")


@dataclass(frozen=True)
class Quality:
    """The measurements of one codebase (one row of ``code_quality`` without its keys)."""

    files: int  # Python files measured
    unparsable_files: int  # files radon could not parse (a syntax error): left out of MI and CC
    sloc: int
    mi: float | None  # SLOC-weighted mean maintainability index, 0..100; NULL without parsable code
    cc_mean: float | None  # mean cyclomatic complexity per block; NULL without blocks
    cc_max: int | None
    blocks: int
    pylint_score: float | None  # 0..10; NULL when pylint did not produce one (see ``error``)
    pylint_messages: dict[str, int]  # message type (error, warning, …) → count
    lines_added: int  # against the base, over the same files
    lines_deleted: int
    error: str | None = None  # why a measurement is missing, in words
    tools: str = ""  # tool versions, e.g. "radon 6.0.1, pylint 3.3.1"


def python_files(root: Path, tests_dir: str) -> list[str]:
    """Relative paths of the Python files to measure: outside ``tests_dir`` and hidden folders."""
    found = []
    for rel, kind in treefs.walk(root):  # any depth: Path.rglob of Python 3.11 recurses once per folder
        parts = rel.split("/")
        if not rel.endswith(".py") or parts[0] == tests_dir or any(p.startswith(".") for p in parts) or kind == "link":
            continue
        found.append(rel)
    return sorted(found)


def measure(tree: Path, base: Path, tests_dir: str = "tests", *, pylint: bool = True) -> Quality:
    """Measure the codebase in ``tree``; changed lines are counted against ``base``."""
    files = python_files(tree, tests_dir)
    texts = {f: _read(tree / f) for f in files}
    mi_sum = sloc_sum = 0.0
    complexities: list[int] = []
    unparsable = 0
    sloc = 0
    for text in texts.values():
        try:
            with _PARSE_LOCK:
                file_sloc = analyze(text).sloc
                file_mi = mi_visit(text, multi=True)
                complexities += [block.complexity for block in cc_visit(text)]
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # What an agent's file can make the parser raise: MemoryError is CPython's parser stack
            # overflow on deep nesting (``x = ------…1``), not a machine out of memory. Such a file
            # is unparsable like any other; it must never end the task unmeasured.
            unparsable += 1
            continue
        sloc += file_sloc
        mi_sum += file_mi * file_sloc
        sloc_sum += file_sloc
    added, deleted = changed_lines(tree, base, tests_dir)
    score, messages, error = _pylint(tree, files) if pylint and files else (None, {}, None)
    return Quality(
        files=len(files), unparsable_files=unparsable, sloc=sloc,
        mi=round(mi_sum / sloc_sum, 4) if sloc_sum else None,
        cc_mean=round(sum(complexities) / len(complexities), 4) if complexities else None,
        cc_max=max(complexities) if complexities else None, blocks=len(complexities),
        pylint_score=score, pylint_messages=messages,
        lines_added=added, lines_deleted=deleted, error=error, tools=tool_versions(),
    )


def changed_lines(tree: Path, base: Path, tests_dir: str) -> tuple[int, int]:
    """Lines added and deleted in the measured files of ``tree`` against ``base`` (as ``git diff`` counts them)."""
    added = deleted = 0
    for rel in sorted(set(python_files(tree, tests_dir)) | set(python_files(base, tests_dir))):
        new, old = _lines(tree / rel), _lines(base / rel)
        for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
            tag, i1, i2, j1, j2 = group
            if tag != "equal":
                deleted += i2 - i1
                added += j2 - j1
    return added, deleted


def tool_versions() -> str:
    return f"radon {version('radon')}, pylint {version('pylint')}"


def _pylint(tree: Path, files: list[str]) -> tuple[float | None, dict[str, int], str | None]:
    rcfile = Path(__file__).with_name("pylintrc")
    with tempfile.TemporaryDirectory(prefix="evoci-pylint-") as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "PYLINTHOME": home}
        result = run_process([sys.executable, "-I", "-m", "pylint", f"--rcfile={rcfile}", *_PYLINT_ARGS, *files],
                             cwd=tree, env=env, timeout=PYLINT_TIMEOUT_S, output_limit=50_000_000)
    if result.timed_out:
        return None, {}, f"pylint did not finish within {PYLINT_TIMEOUT_S:.0f} s"
    try:
        stats = json.loads(result.stdout)["statistics"]
        counts = {k: int(v) for k, v in stats["messageTypeCount"].items() if v}
        return float(stats["score"]), counts, None
    except (ValueError, KeyError, TypeError):
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, {}, f"pylint gave no score (exit {result.exit_code}): {tail[0][:300]}"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _lines(path: Path) -> list[str]:
    return _read(path).splitlines() if path.is_file() else []
