from typing import Protocol

Row = tuple[str, int]


class Exporter(Protocol):
    def export(self, title: str, rows: list[Row]) -> str: ...
