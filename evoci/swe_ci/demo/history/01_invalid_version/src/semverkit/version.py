"""The Version type: parsing, formatting, SemVer precedence and bumping."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Optional, Tuple, Union

from semverkit.errors import InvalidVersion

Identifier = Union[int, str]

_NUMBER = r"0|[1-9][0-9]*"
# A prerelease identifier is a number without leading zeros, or a word with a letter or hyphen.
_PRERELEASE_ID = r"0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*"
_BUILD_ID = r"[0-9A-Za-z-]+"
_VERSION = re.compile(
    rf"(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<prerelease>(?:{_PRERELEASE_ID})(?:\.(?:{_PRERELEASE_ID}))*))?"
    rf"(?:\+(?P<build>{_BUILD_ID}(?:\.{_BUILD_ID})*))?"
)


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Version:
    """A semantic version: MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD].

    Numeric prerelease identifiers are kept as ints so that they compare as numbers
    (``rc.10`` comes after ``rc.9``). Build metadata is kept for display only.
    """

    major: int
    minor: int
    patch: int
    prerelease: Tuple[Identifier, ...] = ()
    build: Tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("major", "minor", "patch"):
            number = getattr(self, name)
            if not isinstance(number, int) or number < 0:
                raise InvalidVersion(
                    f"{self.major}.{self.minor}.{self.patch}", f"{name} must be a non-negative integer"
                )

    @classmethod
    def parse(cls, text: str) -> Version:
        """Read a version such as ``"1.4.0-rc.2+build.11"``; raise InvalidVersion if malformed."""
        match = _VERSION.fullmatch(text.strip())
        if match is None:
            raise InvalidVersion(text)
        return cls(
            int(match["major"]),
            int(match["minor"]),
            int(match["patch"]),
            _identifiers(match["prerelease"]),
            tuple(match["build"].split(".")) if match["build"] else (),
        )

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(part) for part in self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        return f"Version.parse({str(self)!r})"

    # Precedence, SemVer 2.0.0 §11. Equality follows precedence: build metadata is ignored.

    def _precedence(self) -> tuple:
        if not self.prerelease:
            # A release ranks above every prerelease of the same MAJOR.MINOR.PATCH.
            return (self.major, self.minor, self.patch, 1, ())
        # Numeric identifiers rank below alphanumeric ones and compare as numbers; when
        # all shared identifiers are equal the longer list wins, as it does for tuples.
        ranked = tuple((0, part, "") if isinstance(part, int) else (1, 0, part) for part in self.prerelease)
        return (self.major, self.minor, self.patch, 0, ranked)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._precedence() == other._precedence()

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._precedence() < other._precedence()

    def __hash__(self) -> int:
        return hash(self._precedence())

    # Bumping returns a new version; build metadata never carries over.

    def bump_major(self) -> Version:
        return Version(self.major + 1, 0, 0)

    def bump_minor(self) -> Version:
        return Version(self.major, self.minor + 1, 0)

    def bump_patch(self) -> Version:
        return Version(self.major, self.minor, self.patch + 1)


def _identifiers(text: Optional[str]) -> Tuple[Identifier, ...]:
    """``"rc.2"`` → ``("rc", 2)``."""
    if not text:
        return ()
    return tuple(int(part) if part.isdigit() else part for part in text.split("."))
