from src.exporters.base import Row


class MarkdownExporter
    def export(self, title: str, rows: list[Row]) -> str:
        table = ["| name | value |", "|---|---|"] + [f"| {name} | {value} |" for name, value in rows]
        return "\n".join([f"# {title}", ""] + table)
