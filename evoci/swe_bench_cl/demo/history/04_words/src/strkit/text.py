ELLIPSIS = "..."


def truncate(text, width):
    """``text`` if it fits in ``width`` characters, else its leading whole words and an ellipsis."""
    if len(text) <= width:
        return text
    room = max(width - len(ELLIPSIS), 0)
    head = text[: room + 1]
    cut = head.rfind(" ")
    kept = head[:cut] if cut > 0 else text[:room]
    return kept.rstrip() + ELLIPSIS
