ELLIPSIS = "..."


def truncate(text, width):
    """``text`` if it fits in ``width`` characters, else its start and an ellipsis, ``width`` long."""
    if len(text) <= width:
        return text
    return text[: max(width - len(ELLIPSIS), 0)] + ELLIPSIS
