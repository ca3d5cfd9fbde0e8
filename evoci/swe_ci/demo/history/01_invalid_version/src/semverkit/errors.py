"""Errors raised for input semverkit cannot read. Each is a ValueError."""

from __future__ import annotations


class SemverError(ValueError):
    """Base class of every error semverkit raises for bad input."""


class InvalidVersion(SemverError):
    """Text that is not a semantic version, or a version built from bad numbers."""

    def __init__(self, text: str, reason: str = "expected MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]"):
        super().__init__(f"invalid version {text!r}: {reason}")
        self.text = text
        self.reason = reason
