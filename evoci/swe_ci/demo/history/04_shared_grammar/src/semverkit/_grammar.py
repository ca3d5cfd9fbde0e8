"""The version grammar of SemVer 2.0.0, shared by Version.parse and Range.parse."""

from __future__ import annotations

import re
from typing import Optional, Tuple, Union

Identifier = Union[int, str]

NUMBER = r"0|[1-9][0-9]*"
# A prerelease identifier is a number without leading zeros, or a word with a letter or hyphen.
PRERELEASE_ID = r"0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*"
BUILD_ID = r"[0-9A-Za-z-]+"
_TAIL = (
    rf"(?:-(?P<prerelease>(?:{PRERELEASE_ID})(?:\.(?:{PRERELEASE_ID}))*))?"
    rf"(?:\+(?P<build>{BUILD_ID}(?:\.{BUILD_ID})*))?"
)

# MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]
VERSION = re.compile(rf"(?P<major>{NUMBER})\.(?P<minor>{NUMBER})\.(?P<patch>{NUMBER}){_TAIL}")

# The same inside a range, where the minor and patch numbers may be left out: "1", "1.2".
PARTIAL = re.compile(rf"(?P<major>{NUMBER})(?:\.(?P<minor>{NUMBER})(?:\.(?P<patch>{NUMBER}){_TAIL})?)?")


def numbers(match: re.Match) -> Tuple[Optional[int], Optional[int], Optional[int]]:
    """MAJOR, MINOR and PATCH of a VERSION or PARTIAL match; None where left out."""
    major, minor, patch = (match[name] for name in ("major", "minor", "patch"))
    return _number(major), _number(minor), _number(patch)


def prerelease(match: re.Match) -> Tuple[Identifier, ...]:
    """``rc.2`` → ``("rc", 2)``: numeric identifiers become ints so they compare as numbers."""
    text = match["prerelease"]
    if not text:
        return ()
    return tuple(int(part) if part.isdigit() else part for part in text.split("."))


def build(match: re.Match) -> Tuple[str, ...]:
    """``build.5`` → ``("build", "5")``: build identifiers stay text."""
    text = match["build"]
    return tuple(text.split(".")) if text else ()


def _number(text: Optional[str]) -> Optional[int]:
    return None if text is None else int(text)
