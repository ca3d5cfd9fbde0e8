"""The official test command of a SWE-bench-format record: its ``test_cmds`` plus the test directives.

SWE-bench's harness (and SWE-EVO's, which follows it) does not run a record's test command
over the whole suite: it appends the test files the record's ``test_patch`` touches (the
"test directives"), so only those files are collected. The records' F2P/P2P lists were made
that way, and running the whole suite is 10–20× slower for the same target outcomes.

evoci's directives: every path the ``test_patch`` touches that still exists after it (a file
it deletes is left out, as the official harness does) and is a Python file. The official
harness keeps any path but a list of data suffixes, then special-cases instances whose
non-Python paths made pytest stop with "file not found"; keeping ``.py`` files only is the
rule those special cases converge to. A record with an empty ``test_patch`` runs its command
as given (the whole suite), as the official harness does.

Plugin options: grading runs with plugin autoloading off, so an option a plugin adds
(``-n0`` of pytest-xdist: 13 of the 48 public SWE-EVO records pass it) would make pytest
stop with a usage error. ``plugins_for_options`` names the plugin module each such option
needs; the grader loads it explicitly with ``-p``.

This module only builds the command; how it is run (sandbox, isolation, report) is the grader's.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_BLOCK = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_DELETED = re.compile(r"^(deleted file mode \d+|\+\+\+ /dev/null)", re.MULTILINE)

# An option (exact, or its prefix followed by a value) → the plugin module that defines it.
PLUGIN_OPTIONS: tuple[tuple[str, str], ...] = (
    ("-n", "xdist.plugin"), ("--numprocesses", "xdist.plugin"), ("--dist", "xdist.plugin"),
    ("--maxprocesses", "xdist.plugin"),
    ("--timeout", "pytest_timeout"),
    ("--cov", "pytest_cov.plugin"), ("--no-cov", "pytest_cov.plugin"),
    ("--reruns", "pytest_rerunfailures"), ("--only-rerun", "pytest_rerunfailures"),
    ("--benchmark-", "pytest_benchmark.plugin"),
    ("--randomly-", "pytest_randomly"),
    ("--mypy", "pytest_mypy"),
)


@dataclass(frozen=True)
class TestCommand:
    """The command to run and the plugins it needs loaded explicitly."""

    text: str
    plugins: tuple[str, ...] = ()
    directives: tuple[str, ...] = ()

    __test__ = False  # not a pytest test class


def test_directives(test_patch: str) -> list[str]:
    """The Python files a ``test_patch`` adds or changes (not those it deletes), in patch order."""
    headers = list(_BLOCK.finditer(test_patch or ""))
    found: list[str] = []
    for i, header in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(test_patch)
        path = header.group(2)
        if _DELETED.search(test_patch[header.end():end]) or not path.endswith(".py"):
            continue
        if path not in found:
            found.append(path)
    return found


test_directives.__test__ = False  # a helper, not a pytest test


def plugins_for_options(test_cmds: str) -> list[str]:
    """The plugin modules the options of ``test_cmds`` need (``-n0`` → ``xdist.plugin``), each once."""
    try:
        words = shlex.split(test_cmds)
    except ValueError:
        words = test_cmds.split()
    needed: list[str] = []
    for word in words:
        for option, plugin in PLUGIN_OPTIONS:
            short = option.startswith("-") and not option.startswith("--")
            hit = word == option or (word.startswith(option) and (short or option.endswith("-") or
                                                                  word[len(option)] == "="))
            if hit and plugin not in needed:
                needed.append(plugin)
    return needed


def official_command(test_cmds: str, test_patch: str) -> TestCommand:
    """``test_cmds`` with the directives appended, and the plugins its options need."""
    directives = test_directives(test_patch)
    text = test_cmds.strip()
    if directives:
        text = f"{text} {shlex.join(directives)}"
    return TestCommand(text=text, plugins=tuple(plugins_for_options(test_cmds)), directives=tuple(directives))
