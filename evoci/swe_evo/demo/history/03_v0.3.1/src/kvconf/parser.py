"""Turn ``key = value`` lines, grouped in ``[section]``s, into a dictionary of typed values."""

from kvconf.values import convert


class ParseError(ValueError):
    """A line that is neither blank, a comment, a section header, nor ``key = value``."""

    def __init__(self, line_number, line):
        super().__init__(f"line {line_number}: expected 'key = value', got {line!r}")
        self.line_number = line_number


def parse(text, typed=True):
    """The settings in ``text``: later keys win; blank lines and ``#`` comments are skipped.

    Keys after a ``[name]`` header go into the nested dictionary ``settings[name]``.
    Values are converted (``convert``) unless ``typed`` is false.
    """
    settings = {}
    current = settings
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]") and line[1:-1].strip():
            current = settings.setdefault(line[1:-1].strip(), {})
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ParseError(number, raw)
        value = value.strip()
        current[key.strip()] = convert(value) if typed else value
    return settings
