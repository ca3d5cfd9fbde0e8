"""Parsing text that an agent, its model or the code under test controls.

``json.loads`` fails in three ways: ``json.JSONDecodeError`` for text that is not JSON,
``RecursionError`` for JSON nested deeper than Python's recursion limit (``[[[[…]]]]``, a few
kilobytes), and a plain ``ValueError`` for a number of more than 4,300 digits. Every caller
handles the first; the others escaped them, so an agent could end its node with an exception
the harness took for its own fault, and the node was retried and the task left unscored. Here
all are ``json.JSONDecodeError``, which the callers already turn into the agent's outcome (or a
dataset's bad line).

Text an agent sends as a file's name or content must also be something a tree can hold:
``path_problem`` and ``storable`` say so before the harness tries, since the operating system
refuses such a name with ``ValueError`` or ``OSError`` only after the harness began writing.
"""

from __future__ import annotations

import json
from typing import Any


def json_loads(text: str | bytes | bytearray) -> Any:
    """``json.loads(text)``, with nesting too deep or a number too long for Python raised as ``json.JSONDecodeError``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", "", 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # a number of more digits than int() reads (sys.get_int_max_str_digits)
        raise json.JSONDecodeError(str(exc).split(":")[0], "", 0) from None


NAME_MAX = 255  # bytes in one name: the limit of Linux file systems (ext4, xfs, btrfs, tmpfs, overlay)
PATH_MAX = 4096  # bytes in a path the kernel accepts, its closing NUL included


def storable(text: str) -> bool:
    """Whether ``text`` can be a file's content or name: valid Unicode, so UTF-8 can write it.

    A lone surrogate (JSON's ``"\\udcff"``) is no character. ``surrogatepass`` would write bytes no
    UTF-8 reader accepts, ``surrogateescape`` turns it into a byte the sender never meant, and
    replacing it changes what was sent; so such text is refused, never repaired.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def path_problem(path: str) -> str | None:
    """What makes ``path`` (an agent's or model's text) name no file in any tree, or None.

    Its text only, not where it leads: a NUL (no system call takes one), text that is not
    ``storable``, a name over ``NAME_MAX`` bytes, or the whole over ``PATH_MAX``.
    """
    if "\0" in path:
        return "contains a NUL character"
    if not storable(path):
        return "is not valid text (a lone surrogate)"
    if len(path.encode()) >= PATH_MAX:
        return f"is longer than {PATH_MAX - 1} bytes"
    if any(len(name.encode()) > NAME_MAX for name in path.split("/")):
        return f"has a name longer than {NAME_MAX} bytes"
    return None


__all__ = ["NAME_MAX", "PATH_MAX", "json_loads", "path_problem", "storable"]
