from src.exporters.base import Row


class CsvExporter:
    def export(self, title: str, rows: list[Row]) -> str:
        return "\n".join(["name,value"] + [f"{name},{value}" for name, value in rows])
