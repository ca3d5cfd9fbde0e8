"""The pipeline modules that only read files: required_paths, baseline_diff, frozen_paths,
source_analysis. Each returns its findings (empty = the check passes).

They run in the harness over the grading tree's copy of the agent's code, never by
importing it, so nothing the agent wrote executes here.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path
from typing import Any

from evoci.nitr.pipeline import Module


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def required_paths(module: Module, case: Path, baseline: Path) -> list[str]:
    return [f"missing required path: {p}" for p in module.settings.get("paths", []) if not (case / p).exists()]


def frozen_paths(module: Module, case: Path, baseline: Path) -> list[str]:
    findings = []
    for path in module.settings.get("paths", []):
        now, then = case / path, baseline / path
        if not now.is_file():
            findings.append(f"frozen path deleted: {path}")
        elif not then.is_file():
            findings.append(f"frozen path not in the starter code: {path}")
        elif now.read_bytes() != then.read_bytes():
            findings.append(f"frozen path modified: {path}")
    return findings


def baseline_diff(module: Module, case: Path, baseline: Path) -> list[str]:
    """Changes against the pristine starter code that the module's allowlists do not cover."""
    s = module.settings
    if s.get("paths"):
        paths = set(s["paths"])
    else:
        globs = s.get("include_globs") or ["**"]
        everything = _files(case) | _files(baseline)
        paths = {p for p in everything if any(fnmatch.fnmatch(p, g) for g in globs)}
    paths = {p for p in paths if not any(fnmatch.fnmatch(p, g) for g in s.get("exclude_globs", []))}
    allowed = {k: set(s.get(k, [])) for k in ("allow_created", "allow_deleted", "allow_modified")}
    tops = set(s.get("allowed_created_top_levels", []))
    findings = []
    for path in sorted(paths):
        now, then = (case / path).is_file(), (baseline / path).is_file()
        if now and not then:
            if path not in allowed["allow_created"] and path.split("/")[0] not in tops:
                findings.append(f"created: {path}")
        elif then and not now:
            if path not in allowed["allow_deleted"]:
                findings.append(f"deleted: {path}")
        elif now and then and (case / path).read_bytes() != (baseline / path).read_bytes():
            if path not in allowed["allow_modified"]:
                findings.append(f"modified: {path}")
    return findings


_COMMENTS = re.compile(r"(?m)(//.*$|#(?!\s*(include|define|if|endif|pragma|else|elif|undef)\b).*$)|/\*.*?\*/", re.S)
_STRINGS = re.compile(r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'")


def _normalize(text: str, mode: str | None) -> str:
    if mode in ("strip_comments", "strip_comments_and_strings"):
        text = _COMMENTS.sub("", text)
    if mode == "strip_comments_and_strings":
        text = _STRINGS.sub('""', text)
    return text


def _scanned(module: Module, case: Path) -> dict[str, str]:
    s = module.settings
    suffixes = tuple(s.get("suffixes", ()))
    excluded_names = set(s.get("exclude_files", []))
    texts: dict[str, str] = {}
    for root in s.get("scan_roots", ["src"]):
        base = case / root
        candidates = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file()) if base.is_dir() else []
        for path in candidates:
            rel = path.relative_to(case).as_posix()
            if (suffixes and not rel.endswith(suffixes)) or path.name in excluded_names or "__pycache__" in path.parts:
                continue
            if any(fnmatch.fnmatch(rel, g) for g in s.get("exclude_globs", [])):
                continue
            texts[rel] = _normalize(path.read_text(errors="replace"), s.get("normalize"))
    return texts


def _matches(rule: dict[str, Any], text: str) -> int | None:
    """1-based line of the first match of any of the rule's patterns or substrings, else None."""
    for pattern in rule.get("any_patterns", []):
        found = re.search(pattern, text, re.MULTILINE)
        if found:
            return text.count("\n", 0, found.start()) + 1
    for needle in rule.get("any_substrings", []):
        at = text.find(needle)
        if at >= 0:
            return text.count("\n", 0, at) + 1
    return None


def source_analysis(module: Module, case: Path, baseline: Path) -> list[str]:
    """File rules report every match (a forbidden pattern); global rules bound how many files match."""
    texts = _scanned(module, case)
    findings: list[str] = []
    for rule in module.settings.get("rules", []):
        for rel, text in texts.items():
            line = _matches(rule, text)
            if line is None:
                continue
            message = rule.get("message", f"{rule.get('id', 'rule')}: {{location}}")
            findings.append(message.format(path=rel, relative_path=rel, line_no=line, location=f"{rel}:{line}"))
            if module.settings.get("stop_on_first_match"):
                return findings
    for rule in module.settings.get("global_rules", []):
        count = sum(1 for text in texts.values() if _matches(rule, text) is not None)
        low, high = rule.get("min_matching_files"), rule.get("max_matching_files")
        if (low is not None and count < low) or (high is not None and count > high):
            findings.append(f"{rule.get('message', rule.get('id', 'global rule'))} ({count} matching file(s))")
    return findings


CHECKS = {
    "required_paths": required_paths,
    "baseline_diff": baseline_diff,
    "frozen_paths": frozen_paths,
    "source_analysis": source_analysis,
}
