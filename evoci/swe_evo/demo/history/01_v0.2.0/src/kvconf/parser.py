"""Turn ``key = value`` lines into a dictionary of typed values."""

from kvconf.values import convert


class ParseError(ValueError):
    """A line that is neither blank, a comment, nor ``key = value``."""

    def __init__(self, line_number, line):
        super().__init__(f"line {line_number}: expected 'key = value', got {line!r}")
        self.line_number = line_number


def parse(text, typed=True):
    """The settings in ``text``: later keys win; blank lines and ``#`` comments are skipped.

    Values are converted (``convert``) unless ``typed`` is false.
    """
    settings = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ParseError(number, raw)
        value = value.strip()
        settings[key.strip()] = convert(value) if typed else value
    return settings
