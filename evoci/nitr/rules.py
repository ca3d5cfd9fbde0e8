"""The rule language of NITR's ``source_analysis`` module: which rules match a file's text.

A rule is an object; the keys decide, in this order (the first that applies is the answer):

    all_of       [rule, …]   every child matches (location: the earliest of theirs)
    any_of       [rule, …]   the first child that matches
    not          rule        if the child matches, the rule does not; else the keys below decide
    any_substrings / all_substrings / any_patterns / all_patterns
                 literal needles or regular expressions (multi-line mode); the first of these
                 keys present decides alone
    substring_hit_thresholds / pattern_hit_thresholds
                 [{"needles" | "patterns", "at_least", "flags"}]: each needs that many distinct hits
    (none of these)          the rule matches, with no line

A per-file rule (``rules``) reports every file it matches; a global rule (``global_rules``)
counts the files it matches against ``min_matching_files`` / ``max_matching_files``. Messages
are ``str.format`` templates over the fields of ``FILE_FIELDS`` / ``GLOBAL_FIELDS`` (one that
cannot be filled is kept as written: the rule matched, so the module fails either way). This is
the public evaluator's semantics, precedence included (``{"not": X, "any_patterns": P}``
means "not X, and P"); ``check_rule`` refuses at load time what cannot be evaluated.
"""

from __future__ import annotations

import re
from typing import Any

FILE_FIELDS = ("rule_id", "path", "relative_path", "line_no", "location", "filename")
GLOBAL_FIELDS = ("rule_id", "matching_file_count", "matching_files")
FILE_MESSAGE = "Source analysis rule '{rule_id}' matched in {path}"
GLOBAL_MESSAGE = "Global source analysis rule '{rule_id}' matched"
_LISTS = ("any_substrings", "all_substrings", "any_patterns", "all_patterns")
_THRESHOLDS = {"substring_hit_thresholds": "needles", "pattern_hit_thresholds": "patterns"}
_RULE_KEYS = {"id", "message", "all_of", "any_of", "not", *_LISTS, *_THRESHOLDS}
_FLAGS = {flag.name: flag for flag in re.RegexFlag if flag.name}

Hit = int | None  # a match: its 1-based line, or None when the rule matched without one
NO_MATCH = object()


def _line(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _earliest(hits: list[Any]) -> Any:
    if any(h is NO_MATCH for h in hits):
        return NO_MATCH
    lines = [h for h in hits if h is not None]
    return min(lines) if lines else None


def _first_substring(needles: list[str], text: str) -> Any:
    found = [at for needle in needles if (at := text.find(needle)) >= 0]
    return _line(text, min(found)) if found else NO_MATCH


def _first_pattern(patterns: list[str], text: str) -> Any:
    found = [m.start() for pattern in patterns if (m := re.search(pattern, text, re.MULTILINE))]
    return _line(text, min(found)) if found else NO_MATCH


def match(rule: dict[str, Any], text: str) -> Any:
    """NO_MATCH, or the rule's hit in ``text``: its line, or None (matched, no line)."""
    if rule.get("all_of"):
        return _earliest([match(child, text) for child in rule["all_of"]])
    if rule.get("any_of"):
        return next((hit for child in rule["any_of"] if (hit := match(child, text)) is not NO_MATCH), NO_MATCH)
    if rule.get("not") is not None and match(rule["not"], text) is not NO_MATCH:
        return NO_MATCH
    if rule.get("any_substrings"):
        return _first_substring(rule["any_substrings"], text)
    if rule.get("all_substrings"):
        return _earliest([_first_substring([n], text) for n in rule["all_substrings"]])
    if rule.get("any_patterns"):
        return _first_pattern(rule["any_patterns"], text)
    if rule.get("all_patterns"):
        return _earliest([_first_pattern([p], text) for p in rule["all_patterns"]])
    for threshold in rule.get("substring_hit_thresholds", []):
        if sum(1 for n in threshold.get("needles", []) if n in text) < int(threshold.get("at_least", 1)):
            return NO_MATCH
    for threshold in rule.get("pattern_hit_thresholds", []):
        flags = 0
        for name in threshold.get("flags", []):
            flags |= _FLAGS[name]
        hits = sum(1 for p in threshold.get("patterns", []) if re.search(p, text, flags))
        if hits < int(threshold.get("at_least", 1)):
            return NO_MATCH
    return None


def _render(template: Any, fields: dict[str, Any]) -> str:
    """The finding's text. A template naming a field the evaluator does not fill (``{h,cc}``) still fails
    the module (the public evaluator crashes on it, which fails the module too): its text is kept as written."""
    try:
        return str(template).format(**fields)
    except (KeyError, IndexError, ValueError, AttributeError):
        return f"{template} [{fields.get('location') or fields['rule_id']}]"


def file_message(rule: dict[str, Any], path: str, relative_path: str, filename: str, hit: Hit) -> str:
    return _render(rule.get("message") or FILE_MESSAGE, {
        "rule_id": rule.get("id", "unnamed_rule"), "path": path, "relative_path": relative_path,
        "line_no": "" if hit is None else hit, "location": f"{relative_path}:{hit}" if hit else relative_path,
        "filename": filename})


def global_message(rule: dict[str, Any], matching: list[str]) -> str:
    return _render(rule.get("message") or GLOBAL_MESSAGE, {
        "rule_id": rule.get("id", "unnamed_rule"), "matching_file_count": len(matching),
        "matching_files": ", ".join(matching)})


def _strings(value: Any, where: str, patterns: bool) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a list of strings")
    for pattern in value if patterns else ():
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{where}: {pattern!r} is not a regular expression ({exc})") from exc


def check_rule(rule: Any, where: str, fields: tuple[str, ...] = FILE_FIELDS) -> None:
    """ValueError naming the bad key of ``rule`` (at ``where``), if it cannot be evaluated as written."""
    if not isinstance(rule, dict):
        raise ValueError(f"{where} must be an object")
    allowed = _RULE_KEYS | ({"min_matching_files", "max_matching_files"} if fields is GLOBAL_FIELDS else set())
    unknown = sorted(set(rule) - allowed)
    if unknown:
        raise ValueError(f"{where} has the unknown key {unknown[0]!r} — a rule may use: {', '.join(sorted(allowed))}")
    for key in ("all_of", "any_of"):
        if key in rule:
            if not isinstance(rule[key], list):
                raise ValueError(f"{where}.{key} must be a list of rules")
            for i, child in enumerate(rule[key]):
                check_rule(child, f"{where}.{key}[{i}]", fields)
    if rule.get("not") is not None:
        check_rule(rule["not"], f"{where}.not", fields)
    for key in _LISTS:
        if key in rule:
            _strings(rule[key], f"{where}.{key}", key.endswith("patterns"))
    for key, items in _THRESHOLDS.items():
        for i, threshold in enumerate(rule.get(key, [])):
            at = f"{where}.{key}[{i}]"
            if not isinstance(threshold, dict) or set(threshold) - {items, "at_least", "flags"}:
                raise ValueError(f"{at} must be an object with {items!r}, 'at_least' and (patterns only) 'flags'")
            _strings(threshold.get(items, []), f"{at}.{items}", items == "patterns")
            if not isinstance(threshold.get("at_least", 1), int):
                raise ValueError(f"{at}.at_least must be an integer")
            bad = [f for f in threshold.get("flags", []) if f not in _FLAGS or items != "patterns"]
            if bad:
                raise ValueError(f"{at}.flags: {bad[0]!r} is not a regex flag — use one of: {', '.join(sorted(_FLAGS))}")
    for key in ("min_matching_files", "max_matching_files"):
        if key in rule and not isinstance(rule[key], int):
            raise ValueError(f"{where}.{key} must be an integer")
