"""strkit: small string helpers (evoci's SWE-Bench-CL demo)."""

from strkit.slug import slugify

__all__ = ["slugify"]
