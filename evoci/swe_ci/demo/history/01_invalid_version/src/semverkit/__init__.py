"""semverkit: parse, compare and bump semantic versions (https://semver.org)."""

from semverkit.errors import InvalidVersion, SemverError
from semverkit.version import Version

__all__ = ["InvalidVersion", "SemverError", "Version"]
