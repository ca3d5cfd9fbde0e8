import re

_PUNCTUATION = re.compile(r"[^\w\s-]")
_SEPARATORS = re.compile(r"[\s_-]+")


def slugify(text, separator="_"):
    """A slug: lower case, punctuation dropped, runs of spaces, dashes and underscores become one separator."""
    words = _PUNCTUATION.sub("", text.lower())
    return _SEPARATORS.sub(separator, words).strip(separator)
