"""Version ranges: which versions a constraint such as ``>=1.0,<2`` allows."""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Callable, Dict, Tuple, Union

from semverkit.errors import InvalidRange, InvalidVersion
from semverkit.version import Version, to_version

_OPERATORS: Dict[str, Callable[[Version, Version], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "=": operator.eq,
    "!=": operator.ne,
}

# An operator (none means "="), then a version whose minor and patch may be left out.
_COMPARATOR = re.compile(
    r"(?P<op><=|>=|!=|<|>|=)?\s*"
    r"(?P<major>[0-9]+)(?:\.(?P<minor>[0-9]+)(?:\.(?P<patch>[0-9]+)(?P<tail>[-+].*)?)?)?"
)


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
    """The versions that satisfy every comparator of a comma-separated list."""

    comparators: Tuple[Comparator, ...]

    @classmethod
    def parse(cls, text: str) -> Range:
        """Read ``">=1.0,<2"``; missing minor and patch numbers count as zero."""
        return cls(tuple(_parse_comparator(part, text) for part in text.split(",")))

    def __contains__(self, version: Union[Version, str]) -> bool:
        candidate = to_version(version)
        return all(comparator.allows(candidate) for comparator in self.comparators)

    def __str__(self) -> str:
        return ",".join(str(comparator) for comparator in self.comparators)


def _parse_comparator(text: str, whole: str) -> Comparator:
    term = text.strip()
    match = _COMPARATOR.fullmatch(term)
    if match is None:
        raise InvalidRange(whole, f"cannot read {term!r} as a comparator")
    # Pad "1.2" to "1.2.0" and let Version.parse check the rest of the syntax.
    padded = f"{match['major']}.{match['minor'] or 0}.{match['patch'] or 0}{match['tail'] or ''}"
    try:
        version = Version.parse(padded)
    except InvalidVersion as exc:
        raise InvalidRange(whole, f"{term!r}: {exc.reason}") from None
    return Comparator(match["op"] or "=", version)
