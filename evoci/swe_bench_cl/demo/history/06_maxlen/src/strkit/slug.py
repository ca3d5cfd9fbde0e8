import re

_PUNCTUATION = re.compile(r"[^\w\s-]")
_SEPARATORS = re.compile(r"[\s_-]+")


def slugify(text, separator="_", max_length=None):
    """A slug: lower case, punctuation dropped, runs of spaces, dashes and underscores become one separator.

    With ``max_length``, the slug keeps the whole words that fit (a single long word is cut).
    """
    words = _PUNCTUATION.sub("", text.lower())
    slug = _SEPARATORS.sub(separator, words).strip(separator)
    if max_length is None or len(slug) <= max_length:
        return slug
    head = slug[: max_length + 1]
    cut = head.rfind(separator)
    return head[:cut] if cut > 0 else slug[:max_length]
