import re

_PUNCTUATION = re.compile(r"[^\w\s-]")
_SEPARATORS = re.compile(r"[\s-]+")


def slugify(text):
    """A URL slug: lower case, punctuation dropped, runs of spaces and dashes become one dash."""
    words = _PUNCTUATION.sub("", text.lower())
    return _SEPARATORS.sub("-", words).strip("-")
