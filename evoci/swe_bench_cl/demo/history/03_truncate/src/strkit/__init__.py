"""strkit: small string helpers (evoci's SWE-Bench-CL demo)."""

from strkit.slug import slugify
from strkit.text import truncate

__all__ = ["slugify", "truncate"]
