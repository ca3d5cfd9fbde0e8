"""semverkit: parse, compare and bump semantic versions (https://semver.org)."""

from semverkit.version import Version

__all__ = ["Version"]
