"""semverkit: parse, compare, bump and match semantic versions (https://semver.org)."""

from semverkit.errors import InvalidRange, InvalidVersion, SemverError
from semverkit.ranges import Range
from semverkit.choose import max_satisfying, min_satisfying, sort_versions
from semverkit.version import Version

__all__ = [
    "InvalidRange",
    "InvalidVersion",
    "Range",
    "SemverError",
    "Version",
    "max_satisfying",
    "min_satisfying",
    "sort_versions",
]
