"""Version ranges: which versions a constraint such as ``^1.2,!=1.4.0`` allows."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Tuple, Union

from semverkit import _grammar
from semverkit._grammar import Identifier
from semverkit.errors import InvalidRange
from semverkit.version import Version, to_version

_OPERATORS: Dict[str, Callable[[Version, Version], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
    "!=": operator.ne,
}

# An optional operator (none means "="), then a version in the PARTIAL grammar.
_TERM = re.compile(r"(?P<op><=|>=|!=|<|>|=|\^|~)?\s*(?P<version>.*)", re.DOTALL)


@dataclass(frozen=True)
class Comparator:
    """One condition on a version, such as ``>=1.2.0``."""

    op: str
    version: Version

    def allows(self, version: Version) -> bool:
        return _OPERATORS[self.op](version, self.version)

    def __str__(self) -> str:
        return f"{self.op}{self.version}"


@dataclass(frozen=True)
class Range:
    """The versions that satisfy every comparator of a comma-separated list.

    Caret and tilde terms are expanded when parsed: ``^1.2`` becomes ``>=1.2.0,<2.0.0``.
    """

    comparators: Tuple[Comparator, ...]

    @classmethod
    def parse(cls, text: str) -> Range:
        """Read ``"^1.2,!=1.4.0"``; missing minor and patch numbers count as zero."""
        return cls(tuple(comparator for term in text.split(",") for comparator in _parse_term(term, text)))

    def __contains__(self, version: Union[Version, str]) -> bool:
        candidate = to_version(version)
        return all(comparator.allows(candidate) for comparator in self.comparators)

    def __str__(self) -> str:
        return ",".join(str(comparator) for comparator in self.comparators)


def _parse_term(text: str, whole: str) -> List[Comparator]:
    """One comma-separated term as plain comparators: ``^1.2`` → ``>=1.2.0``, ``<2.0.0``."""
    term = text.strip()
    op, version_text = _TERM.fullmatch(term).group("op", "version")
    match = _grammar.PARTIAL.fullmatch(version_text)
    if match is None:
        raise InvalidRange(whole, f"cannot read {term!r}")
    given = [number for number in _grammar.numbers(match) if number is not None]
    low = _padded(given, _grammar.prerelease(match))
    if op == "^":
        # Keep the leftmost non-zero number written (or the last one, if all are zero).
        position = next((i for i, number in enumerate(given) if number != 0), len(given) - 1)
        return [Comparator(">=", low), Comparator("<", _next_after(given, position))]
    if op == "~":
        # Allow patch changes, or minor changes when only the major is written.
        return [Comparator(">=", low), Comparator("<", _next_after(given, 1 if len(given) > 1 else 0))]
    return [Comparator(op or "=", low)]


def _padded(given: List[int], prerelease: Tuple[Identifier, ...] = ()) -> Version:
    """The numbers written, with the missing ones as zero: [1, 2] → 1.2.0."""
    major, minor, patch = given + [0] * (3 - len(given))
    return Version(major, minor, patch, prerelease)


def _next_after(given: List[int], position: int) -> Version:
    """The first version past every one that starts with ``given[:position + 1]``."""
    return _padded(given[:position] + [given[position] + 1])
