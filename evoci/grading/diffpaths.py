"""Every path a git diff touches, as git wrote it: quoted names, binary files, renames, links.

A scan that reads only ``+++ b/<path>`` lines misses what an agent can hide: git quotes a name
with a non-ASCII byte (``"src/\\303\\251vil.py"``), a binary file has no ``+++`` line at all
(``Binary files … differ`` or a ``GIT binary patch``), a pure rename has none either, and a
mode change can turn a file into a symbolic link. ``files`` reads each file's header block of
a unified git diff (``git diff`` output or a prediction's patch) and returns one ``DiffFile``
per ``diff --git`` line with everything the scan and the grading tree need.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LINK_MODE = "120000"
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


@dataclass
class DiffFile:
    """One file of a diff: its old and new path (None for /dev/null), mode and added lines."""

    old: str | None = None
    new: str | None = None
    new_mode: str | None = None
    binary: bool = False
    added: list[str] = field(default_factory=list)

    @property
    def paths(self) -> set[str]:
        return {p for p in (self.old, self.new) if p}

    @property
    def is_link(self) -> bool:
        return self.new_mode == LINK_MODE


def unquote(name: str) -> str:
    """A path as git prints it (C-quoted when it holds special or non-ASCII bytes) → the path."""
    if not (len(name) >= 2 and name[0] == name[-1] == '"'):
        return name
    out, body, i = bytearray(), name[1:-1], 0
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567" and re.fullmatch(r"[0-7]{3}", body[i + 1:i + 4] or ""):
                out.append(int(body[i + 1:i + 4], 8))
                i += 4
                continue
            out.append(_ESCAPES.get(nxt, ord(nxt)))
            i += 2
            continue
        out += c.encode()
        i += 1
    return out.decode("utf-8", errors="surrogateescape")


def _strip(name: str, prefix: str) -> str | None:
    name = unquote(name.strip())
    if name == "/dev/null":
        return None
    return name[len(prefix):] if name.startswith(prefix) else name


def _header(rest: str) -> tuple[str | None, str | None]:
    """The two names of ``diff --git <a> <b>`` (either may be quoted; unquoted ones may hold spaces)."""
    quoted = [m for m in _QUOTED.finditer(rest)]
    if quoted:
        first = rest[: quoted[0].end()] if rest.startswith('"') else rest.split(" ", 1)[0]
        second = rest[len(first):].strip()
        return _strip(first, "a/"), _strip(second, "b/")
    half = (len(rest) - 1) // 2  # "a/X b/X": the common case, also with spaces in X
    if rest[half] == " " and rest[2:half] == rest[half + 3:]:
        return rest[2:half], rest[half + 3:]
    first, _, second = rest.partition(" b/")
    return _strip(first, "a/"), second or None


def files(diff: str) -> list[DiffFile]:
    """The files of a unified git diff, in order (see the module docstring)."""
    found: list[DiffFile] = []
    current: DiffFile | None = None
    in_hunk = False
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            current, in_hunk = DiffFile(), False
            current.old, current.new = _header(line[len("diff --git "):])
            found.append(current)
        elif current is None:
            continue
        elif in_hunk:
            if line.startswith("+"):
                current.added.append(line[1:])
        elif line.startswith("@@"):
            in_hunk = True
        elif line.startswith(("new file mode ", "new mode ")):
            current.new_mode = line.rsplit(" ", 1)[1]
        elif line.startswith(("rename to ", "copy to ")):
            current.new = _strip(line.split(" ", 2)[2], "")
        elif line.startswith(("rename from ", "copy from ")):
            current.old = _strip(line.split(" ", 2)[2], "")
        elif line.startswith("+++ "):
            current.new = _strip(line[4:], "b/")
        elif line.startswith("--- "):
            current.old = _strip(line[4:], "a/")
        elif line.startswith(("Binary files ", "GIT binary patch")):
            current.binary = True
        elif line.startswith("deleted file mode "):
            current.new = None
    return found
