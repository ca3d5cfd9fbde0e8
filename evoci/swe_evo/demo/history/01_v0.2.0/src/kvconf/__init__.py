"""kvconf: read small ``key = value`` configuration files."""

from kvconf.parser import ParseError, parse
from kvconf.values import convert

__version__ = "0.2.0"
__all__ = ["ParseError", "convert", "parse"]
