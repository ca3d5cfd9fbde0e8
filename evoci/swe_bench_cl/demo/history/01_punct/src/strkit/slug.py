import re

_PUNCTUATION = re.compile(r"[^\w\s-]")


def slugify(text):
    """A URL slug: lower case, punctuation dropped, spaces become dashes."""
    return _PUNCTUATION.sub("", text.lower()).replace(" ", "-")
