from src.exporters.base import Row


class TextExporter:
    def export(self, title: str, rows: list[Row]) -> str:
        return "\n".join([title] + [f"{name}: {value}" for name, value in rows])
