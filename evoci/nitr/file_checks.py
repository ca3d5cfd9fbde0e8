"""The pipeline modules that only read files: required_paths, baseline_diff, frozen_paths,
source_analysis. Each returns its findings (empty = the check passes).

They run in the harness over the grading tree's copy of the agent's code, never by
importing it, so nothing the agent wrote executes here. Their semantics are the public
evaluator's, defaults included:

- a module's ``root`` (``case_root`` by default) picks the tree ``paths`` / ``scan_roots`` are
  relative to: ``repo_root``, ``case_root``, ``baseline_case_root``, ``evaluator_root``, ``build_dir``;
- files compare as UTF-8 text with universal newlines (a CRLF-only change is no change; a
  file that is not UTF-8 text, or a folder where a file is expected, fails the module);
- ``baseline_diff`` collects files with ``Path.glob`` (``src/**/*`` includes ``src/a.py``),
  by default ``src/**/*`` and ``app/**/*``; ``exclude_globs`` use ``PurePath.match`` on the
  absolute and the relative path; every allowlist (``allow_created``, ``allow_deleted``,
  ``allow_modified``, ``allow_missing_in_root``, ``allow_missing_in_baseline``,
  ``allowed_created_top_levels``) is honoured;
- ``source_analysis`` scans files with the suffixes listed (by default the C/C++ ones
  ``.h .hpp .cc .cpp``: a Python probe must list ``.py``), normalises them (``strip_comments``
  removes C/C++ comments only), and applies ``evoci.nitr.rules``.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from evoci.nitr import rules
from evoci.nitr.pipeline import Module, Places

DEFAULT_INCLUDE_GLOBS = ("src/**/*", "app/**/*")
DEFAULT_SUFFIXES = (".h", ".hpp", ".cc", ".cpp")


class Unreadable(Exception):
    """A path the module must read as text is not UTF-8 text (the public evaluator fails the module)."""


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, IsADirectoryError, PermissionError) as exc:
        raise Unreadable(f"cannot read {path.name} as UTF-8 text ({type(exc).__name__})") from exc


def _root(module: Module, tree: Path, places: Places) -> Path:
    return tree / places[module.settings.get("root", "case_root")]


def required_paths(module: Module, tree: Path, places: Places) -> list[str]:
    root = _root(module, tree, places)
    return [f"missing required path: {p}" for p in module.settings["paths"] if not (root / p).exists()]


def _classify(case: Path, baseline: Path, paths: list[str]) -> dict[str, list[str]]:
    """Each path as the public evaluator sorts it: missing in either tree, created, deleted, modified."""
    out: dict[str, list[str]] = {k: [] for k in ("missing_in_root", "missing_in_baseline", "created", "deleted",
                                                   "modified")}
    for raw in paths:
        rel = PurePosixPath(raw).as_posix()
        now, then = (case / rel).exists(), (baseline / rel).exists()
        if not now:
            out["missing_in_root"].append(rel)
        if not then:
            out["missing_in_baseline"].append(rel)
        if now and not then:
            out["created"].append(rel)
        if then and not now:
            out["deleted"].append(rel)
        if now and then and _text(case / rel) != _text(baseline / rel):
            out["modified"].append(rel)
    return out


def frozen_paths(module: Module, tree: Path, places: Places) -> list[str]:
    status = _classify(tree / places["case_root"], tree / places["baseline_case_root"], module.settings["paths"])
    words = {"missing_in_root": "missing from the agent's code", "missing_in_baseline": "missing from the starter code",
             "created": "created", "deleted": "deleted", "modified": "modified"}
    return [f"frozen path {words[kind]}: {p}" for kind, found in status.items() for p in found]


def _excluded(path: Path, rel: str, globs: list[str]) -> bool:
    return any(path.match(g) or PurePosixPath(rel).match(g) for g in globs)


def _collected(module: Module, case: Path, baseline: Path) -> list[str]:
    s = module.settings
    if s.get("paths"):
        return [str(p) for p in s["paths"]]
    found: set[str] = set()
    for root in (case, baseline):
        for pattern in s.get("include_globs", DEFAULT_INCLUDE_GLOBS):
            for path in root.glob(pattern):
                rel = path.relative_to(root).as_posix()
                if path.is_file() and not _excluded(path, rel, s.get("exclude_globs", [])):
                    found.add(rel)
    return sorted(found)


def baseline_diff(module: Module, tree: Path, places: Places) -> list[str]:
    """Changes against the pristine starter code that the module's allowlists do not cover."""
    s = module.settings
    status = _classify(tree / places["case_root"], tree / places["baseline_case_root"],
                       _collected(module, tree / places["case_root"], tree / places["baseline_case_root"]))
    allowed = {k: set(s.get(k, [])) for k in ("allow_created", "allow_deleted", "allow_modified",
                                              "allow_missing_in_root", "allow_missing_in_baseline")}
    tops = set(s.get("allowed_created_top_levels", []))
    findings = [f"missing from the agent's code and the starter code: {p}" for p in status["missing_in_root"]
                if p not in status["deleted"] and p not in allowed["allow_missing_in_root"]]
    findings += [f"missing from the starter code and the agent's code: {p}" for p in status["missing_in_baseline"]
                 if p not in status["created"] and p not in allowed["allow_missing_in_baseline"]]
    findings += [f"created: {p}" for p in status["created"]
                 if p not in allowed["allow_created"] and (PurePosixPath(p).parts or ("",))[0] not in tops]
    findings += [f"deleted: {p}" for p in status["deleted"] if p not in allowed["allow_deleted"]]
    findings += [f"modified: {p}" for p in status["modified"] if p not in allowed["allow_modified"]]
    return findings


_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//.*")
_DOUBLE_QUOTED = re.compile(r'"(?:\\.|[^"\\])*"')
_SINGLE_QUOTED = re.compile(r"'(?:\\.|[^'\\])+'")


def _normalize(text: str, mode: str | None) -> str:
    """C/C++ comments removed (``strip_comments``), after string and char literals are emptied (``…_and_strings``)."""
    if mode == "strip_comments_and_strings":
        text = _SINGLE_QUOTED.sub("''", _DOUBLE_QUOTED.sub('""', text))
    if mode in ("strip_comments", "strip_comments_and_strings"):
        text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))
    return text


def _scanned(module: Module, tree: Path, places: Places) -> list[tuple[Path, str, str]]:
    """(path, path relative to the module's root, normalised text) of every file the module scans."""
    s = module.settings
    root = _root(module, tree, places)
    suffixes = set(s.get("suffixes", DEFAULT_SUFFIXES))
    candidates: set[Path] = set()
    for raw in s.get("scan_roots", ["src"]):
        base = root / module.expand(raw, places)
        candidates.update([base] if base.is_file() else base.rglob("*"))
    scanned = []
    for path in sorted(p for p in candidates if p.is_file() and p.suffix in suffixes):
        try:
            rel = path.relative_to(root).as_posix()
        except ValueError:
            raise Unreadable(f"scan root {path} is outside the module's root") from None
        if path.name in s.get("exclude_files", []) or _excluded(path, rel, s.get("exclude_globs", [])):
            continue
        scanned.append((path, rel, _normalize(path.read_text(encoding="utf-8", errors="replace"), s.get("normalize"))))
    return scanned


def source_analysis(module: Module, tree: Path, places: Places) -> list[str]:
    """Per-file rules report every file they match; global rules bound how many files match."""
    s = module.settings
    stop = bool(s.get("stop_on_first_match", False))
    findings: list[str] = []
    scanned = _scanned(module, tree, places)
    for path, rel, text in scanned:
        for rule in s.get("rules", []):
            hit = rules.match(rule, text)
            if hit is not rules.NO_MATCH:
                findings.append(rules.file_message(rule, rel, rel, path.name, hit))
                if stop:
                    return findings
    for rule in s.get("global_rules", []):
        matching = [rel for _, rel, text in scanned if rules.match(rule, text) is not rules.NO_MATCH]
        low, high = rule.get("min_matching_files"), rule.get("max_matching_files")
        findings += [rules.global_message(rule, matching) for bound in (low is not None and len(matching) < low,
                                                                        high is not None and len(matching) > high)
                     if bound]
        if stop and findings:
            return findings
    return findings


def run_check(module: Module, tree: Path, places: Places) -> list[str]:
    """The module's findings; a file it cannot read fails it, as in the public evaluator."""
    try:
        return CHECKS[module.module_name](module, tree, places)
    except Unreadable as exc:
        return [f"{module.module_name} could not run: {exc}"]
    except RecursionError:  # pathlib's globs recurse once per folder: the agent nested its folders past that
        return [f"{module.module_name} could not run: the tree's folders are nested deeper than Python's recursion limit"]


CHECKS = {
    "required_paths": required_paths,
    "baseline_diff": baseline_diff,
    "frozen_paths": frozen_paths,
    "source_analysis": source_analysis,
}
