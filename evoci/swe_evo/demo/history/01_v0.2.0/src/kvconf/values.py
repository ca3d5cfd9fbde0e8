"""Typed values: integers, booleans and quoted strings."""

_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}


def convert(value):
    """``value`` as an int, a bool, an unquoted string, or unchanged."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    try:
        return int(value)
    except ValueError:
        return value
