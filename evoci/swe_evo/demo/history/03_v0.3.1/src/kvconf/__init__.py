"""kvconf: read and write small ``key = value`` configuration files."""

from kvconf.parser import ParseError, parse
from kvconf.values import convert
from kvconf.writer import dump

__version__ = "0.3.1"
__all__ = ["ParseError", "convert", "dump", "parse"]
