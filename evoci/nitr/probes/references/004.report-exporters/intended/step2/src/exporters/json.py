import json

from src.exporters.base import Row


class JsonExporter:
    def export(self, title: str, rows: list[Row]) -> str:
        data = {"title": title, "rows": [{"name": name, "value": value} for name, value in rows]}
        return json.dumps(data, separators=(",", ":"))
