"""Choosing among candidate versions: the newest or oldest a range allows, and sorting."""

from __future__ import annotations

from typing import Iterable, List, Optional, Union

from semverkit.ranges import Range
from semverkit.version import Version, to_version

VersionLike = Union[Version, str]
RangeLike = Union[Range, str]


def max_satisfying(
    versions: Iterable[VersionLike], spec: RangeLike, *, include_prerelease: bool = False
) -> Optional[Version]:
    """The newest of ``versions`` that ``spec`` allows, or None if it allows none.

    Prereleases are skipped unless ``spec`` names one, or ``include_prerelease`` is set
    (see ``Range.contains``).
    """
    return max(_satisfying(versions, spec, include_prerelease), default=None)


def min_satisfying(
    versions: Iterable[VersionLike], spec: RangeLike, *, include_prerelease: bool = False
) -> Optional[Version]:
    """The oldest of ``versions`` that ``spec`` allows, or None if it allows none."""
    return min(_satisfying(versions, spec, include_prerelease), default=None)


def sort_versions(versions: Iterable[VersionLike], *, reverse: bool = False) -> List[Version]:
    """``versions`` as Version objects in precedence order, oldest first unless ``reverse``."""
    return sorted((to_version(version) for version in versions), reverse=reverse)


def _satisfying(versions: Iterable[VersionLike], spec: RangeLike, include_prerelease: bool) -> List[Version]:
    allowed = spec if isinstance(spec, Range) else Range.parse(spec)
    return [
        version
        for version in map(to_version, versions)
        if allowed.contains(version, include_prerelease=include_prerelease)
    ]
