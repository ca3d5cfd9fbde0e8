"""Version ranges: which versions a constraint such as ``^1.2 || >=3`` allows."""

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

# An optional operator, then a version in the PARTIAL grammar.
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
    """A union (``||``) of comparator sets; a set (``,``) allows what all its comparators allow.

    Caret, tilde and x-range terms are expanded when parsed: ``^1.2`` and ``1.x`` become
    ``>=1.2.0,<2.0.0`` and ``>=1.0.0,<2.0.0``.
    """

    alternatives: Tuple[Tuple[Comparator, ...], ...]

    @classmethod
    def parse(cls, text: str) -> Range:
        """Read ``"^1.2,!=1.4.0 || >=3"``; see the README for every form a term can take."""
        alternatives = []
        for member in text.split("||"):
            terms = member.split(",")
            alternatives.append(tuple(comparator for term in terms for comparator in _parse_term(term, text)))
        return cls(tuple(alternatives))

    def contains(self, version: Union[Version, str], *, include_prerelease: bool = False) -> bool:
        """Whether ``version`` is allowed.

        A prerelease is allowed only by a comparator set that names a prerelease of the
        same MAJOR.MINOR.PATCH, as in npm: ``>=1.2.3-beta.1`` allows ``1.2.3-beta.2`` but
        not ``1.2.4-beta``, and ``^1`` allows no prerelease at all. ``include_prerelease``
        drops that rule and compares by precedence alone.
        """
        candidate = to_version(version)
        return any(_allowed(candidate, comparators, include_prerelease) for comparators in self.alternatives)

    def __contains__(self, version: Union[Version, str]) -> bool:
        return self.contains(version)

    def __str__(self) -> str:
        return " || ".join(",".join(str(c) for c in comparators) for comparators in self.alternatives)


def _allowed(version: Version, comparators: Tuple[Comparator, ...], include_prerelease: bool) -> bool:
    if not all(comparator.allows(version) for comparator in comparators):
        return False
    if not version.prerelease or include_prerelease:
        return True
    release = version.finalize()
    return any(c.version.prerelease and c.version.finalize() == release for c in comparators)


def _parse_term(text: str, whole: str) -> List[Comparator]:
    """One comma-separated term as plain comparators: ``^1.2`` → ``>=1.2.0``, ``<2.0.0``."""
    term = text.strip()
    op, version_text = _TERM.fullmatch(term).group("op", "version")
    match = _grammar.PARTIAL.fullmatch(version_text)
    if match is None:
        raise InvalidRange(whole, f"cannot read {term!r}")
    given = _given(match)
    prerelease = _grammar.prerelease(match)
    if prerelease and len(given) < 3:
        raise InvalidRange(whole, f"{term!r}: a prerelease needs a full MAJOR.MINOR.PATCH")
    low = _padded(given, prerelease)
    if op in (None, "=") and len(given) < 3:
        # An x-range: "1.2", "1.2.x" and "=1.2" allow every 1.2 patch; "*" allows everything.
        if not given:
            return [Comparator(">=", low)]
        return [Comparator(">=", low), Comparator("<", _next_after(given, len(given) - 1))]
    if not given:
        raise InvalidRange(whole, f"{term!r}: a wildcard stands alone, write '*'")
    if op == "^":
        # Keep the leftmost non-zero number written (or the last one, if all are zero).
        position = next((i for i, number in enumerate(given) if number != 0), len(given) - 1)
        return [Comparator(">=", low), Comparator("<", _next_after(given, position))]
    if op == "~":
        # Allow patch changes, or minor changes when only the major is written.
        return [Comparator(">=", low), Comparator("<", _next_after(given, 1 if len(given) > 1 else 0))]
    # Plain comparators count missing numbers as zero: ">=1.2" is ">=1.2.0".
    return [Comparator(op or "=", low)]


def _given(match: re.Match) -> List[int]:
    """The numbers written before the first wildcard or gap: "1.2.x" → [1, 2]."""
    given = []
    for number in _grammar.numbers(match):
        if number is None:
            break
        given.append(number)
    return given


def _padded(given: List[int], prerelease: Tuple[Identifier, ...] = ()) -> Version:
    """The numbers written, with the missing ones as zero: [1, 2] → 1.2.0."""
    major, minor, patch = given + [0] * (3 - len(given))
    return Version(major, minor, patch, prerelease)


def _next_after(given: List[int], position: int) -> Version:
    """The first version past every one that starts with ``given[:position + 1]``."""
    return _padded(given[:position] + [given[position] + 1])
