"""Ids are names, never paths.

A task, instance, probe, sequence or run id becomes a folder name under evoci's home
(``runs/<run_id>/<task_id>/…``). A public dataset or a command line is untrusted input: an id
of ``../../x`` would put a workspace outside the home, ``""`` would use the run's own folder,
and ``x`` beside ``x/workspace`` would share one. Every loader and the run id therefore pass
through ``check_name``, which refuses such ids with a message saying what to change.

Refused rather than encoded: an encoded id would no longer be the id people search for in
the results (``where task_id = …``), two spellings could meet in one folder, and a dataset
with such ids is almost always a mistake worth hearing about. The refusal names the record;
the other records of the dataset still run.
"""

from __future__ import annotations

import unicodedata

from evoci.errors import DatasetError

MAX_BYTES = 200  # folder names may hold 255 bytes; evoci appends suffixes such as "@3.1"


def name_problem(value: object) -> str | None:
    """Why ``value`` cannot be a folder name under the home, or None when it can."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if not value.strip():
        return "is empty"
    if value in (".", ".."):
        return f"is {value!r}, a path step"
    if "/" in value or "\\" in value:
        return "contains a path separator ('/' or '\\')"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value) or "\ufffd" in value:
        return "is not valid UTF-8"
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")), None)
    if bad is not None:
        return f"contains the control character U+{ord(bad):04X}"
    if len(value.encode()) > MAX_BYTES:
        return f"is longer than {MAX_BYTES} bytes"
    return None


class BadName(DatasetError, ValueError):
    """An id that cannot be a folder name: bad input (a DatasetError for loaders, a ValueError for pydantic)."""


def check_name(value: object, what: str) -> str:
    """``value`` itself when it is a safe folder name, else a BadName saying what to change.

    ``what`` names the field for the message ("task_id", "run id", …). Loaders record it as the
    record's DatasetError; a pydantic validator reports it as the field's error.
    """
    problem = name_problem(value)
    if problem is not None:
        raise BadName(f"{what} {value!r} {problem} — ids become folder names under evoci's home: use letters, "
                         "digits and . _ - @ + (no '/', no '..', not empty, no control characters)")
    return value  # type: ignore[return-value]
