"""Parsing text that an agent, its model or the code under test controls.

``json.loads`` fails in two ways: ``json.JSONDecodeError`` for text that is not JSON, and
``RecursionError`` for JSON nested deeper than Python's recursion limit (``[[[[…]]]]``, a few
kilobytes). Every caller handles the first; the second escaped them, so an agent could end its
node with an exception the harness took for its own fault, and the node was retried and the
task left unscored. Here both are ``json.JSONDecodeError``, which the callers already turn into
the agent's outcome (or a dataset's bad line).
"""

from __future__ import annotations

import json
from typing import Any


def json_loads(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``, with nesting too deep for Python raised as ``json.JSONDecodeError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", "", 0) from None


__all__ = ["json_loads"]
