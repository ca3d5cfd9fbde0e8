"""The Version type: parsing, formatting, SemVer precedence and bumping."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Optional, Tuple, Union

from semverkit import _grammar
from semverkit._grammar import Identifier
from semverkit.errors import InvalidVersion

# A prerelease label such as "rc" or "beta": a prerelease identifier that is not a number.
_LABEL = re.compile(r"[0-9]*[A-Za-z-][0-9A-Za-z-]*")

_PARTS = ("major", "minor", "patch", "prerelease")


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
        """Read a version such as ``"1.4.0-rc.2+build.11"``; raise InvalidVersion if malformed.

        Surrounding whitespace is ignored: versions are often read from files ("1.2.3\\n").
        """
        match = _grammar.VERSION.fullmatch(text.strip())
        if match is None:
            raise InvalidVersion(text)
        major, minor, patch = _grammar.numbers(match)
        return cls(major, minor, patch, _grammar.prerelease(match), _grammar.build(match))

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

    # Bumping returns a new version; build metadata never carries over. A prerelease
    # that was already heading for the bumped part is released instead of skipped:
    # 1.3.0-beta bumps its minor to 1.3.0, but 1.3.1-beta bumps its minor to 1.4.0.

    def bump_major(self) -> Version:
        if self.prerelease and self.minor == 0 and self.patch == 0:
            return self.finalize()
        return Version(self.major + 1, 0, 0)

    def bump_minor(self) -> Version:
        if self.prerelease and self.patch == 0:
            return self.finalize()
        return Version(self.major, self.minor + 1, 0)

    def bump_patch(self) -> Version:
        if self.prerelease:
            return self.finalize()
        return Version(self.major, self.minor, self.patch + 1)

    def bump_prerelease(self, label: Optional[str] = None) -> Version:
        """The next prerelease: 1.2.3 → 1.2.4-rc.0 → 1.2.4-rc.1.

        ``label`` switches to another label (1.2.4-alpha.3 → 1.2.4-beta.0); without it
        the current label is kept, or ``rc`` is used after a release.
        """
        if label is not None and not _LABEL.fullmatch(label):
            raise ValueError(f"invalid prerelease label {label!r}: use letters, digits and hyphens, not only digits")
        if not self.prerelease:
            return Version(self.major, self.minor, self.patch + 1, (label or "rc", 0))
        *words, last = self.prerelease
        if isinstance(last, int):
            current, number = tuple(words), last
        else:
            current, number = self.prerelease, None
        if label is None or (label,) == current:
            following = 0 if number is None else number + 1
            return Version(self.major, self.minor, self.patch, current + (following,))
        return Version(self.major, self.minor, self.patch, (label, 0))

    def finalize(self) -> Version:
        """The release this version leads to: 2.0.0-rc.1+build.7 → 2.0.0."""
        return Version(self.major, self.minor, self.patch)

    def bump(self, part: str) -> Version:
        """Bump the named part: ``v.bump("minor")`` is ``v.bump_minor()``."""
        if part not in _PARTS:
            raise ValueError(f"unknown part {part!r} — choose one of: {', '.join(_PARTS)}")
        return getattr(self, f"bump_{part}")()


def to_version(value: Union[Version, str]) -> Version:
    """Accept a Version or its text, so that functions can take either."""
    if isinstance(value, Version):
        return value
    if isinstance(value, str):
        return Version.parse(value)
    raise TypeError(f"expected a Version or a version string, not {type(value).__name__}")
