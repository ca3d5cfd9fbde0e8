"""kvconf: read small ``key = value`` configuration files."""

from kvconf.parser import ParseError, parse

__version__ = "0.1.0"
__all__ = ["ParseError", "parse"]
