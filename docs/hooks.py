"""MkDocs hook: render the metric-view and base-table reference pages from ``sql/`` at build time.

Each metric view (or macro) is one file in ``sql/views/``, opened by a comment block that says
its grain, formula, source and edge cases. The reference pages hold only a marker; this hook
replaces it with what the files say when the site is built, so the documentation of a view can
never drift from the view itself, and nothing generated is ever committed.

Registered in ``mkdocs.yml`` under ``hooks:``. It reads files only: no evoci import, no network.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parent.parent
VIEWS = ROOT / "sql" / "views"
SCHEMA = ROOT / "sql" / "schema.sql"

VIEWS_MARKER = "<!-- evoci:metric-views -->"
SCHEMA_MARKER = "<!-- evoci:base-tables -->"

# Sections of the views page, by file-name prefix; a file matching none is shared by every protocol.
GROUPS = [
    ("swe_ci_", "SWE-CI"),
    ("swe_evo_", "SWE-EVO"),
    ("cl_", "SWE-Bench-CL"),
    ("nitr_", "NITR"),
]
SHARED = "All protocols"

# The first line of a header: ``name`` or ``name(parameters)``, a colon, then what it is.
TITLE = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?P<params>\(.*?\))?:\s*(?P<summary>.*)$")


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Fill the marker of whichever reference page this is; leave every other page alone."""
    if VIEWS_MARKER in markdown:
        markdown = markdown.replace(VIEWS_MARKER, render_views(VIEWS))
    if SCHEMA_MARKER in markdown:
        markdown = markdown.replace(SCHEMA_MARKER, render_schema(SCHEMA))
    return markdown


def header(path: Path) -> list[str]:
    """The leading ``--`` comment lines of a SQL file, without the comment marks."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("--"):
            break
        text = line[2:]
        lines.append(text[1:] if text.startswith(" ") else text)
    return lines


def split_header(path: Path) -> tuple[str, str, str, list[str]]:
    """(name, parameters, summary, rest): the title paragraph parsed, the rest kept line for line."""
    lines = header(path)
    rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not lines:
        raise PluginError(f"{rel} has no header comment — open it with '-- <name>: what it is', then its "
                          "grain, formula, source and edge cases, as the other files in sql/views/ do")
    match = TITLE.match(lines[0])
    if not match:
        raise PluginError(f"{rel}: the first header line must read '-- <name>: what it is' (or "
                          f"'-- <name>(parameters): what it is'), got {lines[0]!r}")
    # The summary runs to the first blank comment line or the first 'Grain:'-style label.
    summary, rest = [match["summary"]], lines[1:]
    while rest and rest[0].strip() and not re.match(r"^[A-Z][\w ()/-]*:", rest[0]):
        summary.append(rest.pop(0).strip())
    while rest and not rest[0].strip():
        rest.pop(0)
    return match["name"], match["params"] or "", " ".join(summary), rest


def group_of(path: Path) -> str:
    for prefix, title in GROUPS:
        if path.name.startswith(prefix):
            return title
    return SHARED


def inline(text: str) -> str:
    """Header prose as Markdown text: code spans kept, HTML and emphasis characters escaped."""
    parts = re.split(r"(`[^`]*`)", text)
    return "".join(p if p.startswith("`") else html.escape(p, quote=False).replace("*", r"\*").replace("_", r"\_")
                   for p in parts)


def fence(lines: list[str], language: str = "text") -> str:
    """A fenced block that no line of ``lines`` can close early."""
    ticks = "```"
    while any(line.lstrip().startswith(ticks) for line in lines):
        ticks += "`"
    return "\n".join([f"{ticks}{language}", *lines, ticks])


def render_views(folder: Path) -> str:
    files = sorted(folder.glob("*.sql"))
    if not files:
        raise PluginError(f"no view file in {folder} — the metric-views page is rendered from sql/views/*.sql")
    parsed = [(path, *split_header(path)) for path in files]
    order = [title for _, title in GROUPS] + [SHARED]
    out = ["| file | object | what it is |", "|---|---|---|"]
    for path, name, params, summary, _ in parsed:
        out.append(f"| [`{path.name}`](#{anchor(path)}) | `{name}{params}` | {inline(summary)} |")
    for title in order:
        members = [p for p in parsed if group_of(p[0]) == title]
        if not members:
            continue
        out += ["", f"## {title}"]
        for path, name, params, summary, rest in members:
            out += ["", f"### `{path.name}` {{#{anchor(path)}}}", "",
                    f"**`{name}{params}`** — {inline(summary)}", ""]
            if rest:
                out.append(fence(rest))
    return "\n".join(out) + "\n"


def anchor(path: Path) -> str:
    """A view's anchor: its file name without ``.sql`` (``swe_evo_instances``), stable for links."""
    return path.stem


def first_sentence(lines: list[str]) -> str:
    """The comment's first sentence, for the table of contents; the whole comment is in the section."""
    text = " ".join(line.strip() for line in lines)
    end = re.search(r"[.](\s|$)", text)
    return text[:end.start() + 1] if end else text


def render_schema(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out: list[str] = []
    intro = header(path)
    if intro:
        out += [fence(intro), ""]
    tables = list(re.finditer(r"^create table if not exists (\w+) \(\n.*?^\);", text, re.M | re.S))
    if not tables:
        raise PluginError(f"no 'create table if not exists' statement in {path} — "
                          "the base-tables page is rendered from it")
    out += ["| table | what one row is |", "|---|---|"]
    blocks = []
    for match in tables:
        name = match[1]
        start = text[:match.start()].count("\n")
        comment = []
        k = start - 1
        while k >= 0 and lines[k].startswith("--"):
            comment.insert(0, lines[k][3:] if lines[k].startswith("-- ") else lines[k][2:])
            k -= 1
        out.append(f"| [`{name}`](#{name}) | {inline(first_sentence(comment))} |")
        blocks += ["", f"## `{name}` {{#{name}}}", ""]
        if comment:
            blocks += [fence(comment), ""]
        blocks.append(fence(match[0].splitlines(), "sql"))
    alters = [line for line in lines if line.startswith("alter table ")]
    if alters:
        blocks += ["", "## Columns added to older results files", "",
                   "Results files made by an earlier evoci gain these when evoci next writes them:", "",
                   fence(alters, "sql")]
    return "\n".join(out + blocks) + "\n"
