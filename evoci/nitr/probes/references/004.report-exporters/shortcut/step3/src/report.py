"""Sales reports: a title and (name, value) rows, exported in a chosen format."""

from src.exporters import EXPORTERS
from src.exporters.base import Row


def export(title: str, rows: list[Row], fmt: str) -> str:
    if fmt == "markdown":
        table = ["| name | value |", "|---|---|"] + [f"| {name} | {value} |" for name, value in rows]
        return "\n".join([f"# {title}", ""] + table)
    try:
        exporter = EXPORTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}") from None
    return exporter.export(title, rows)
