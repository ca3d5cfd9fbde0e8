"""Report exporters, one per output format, registered by name."""

from src.exporters.base import Exporter
from src.exporters.csv import CsvExporter
from src.exporters.json import JsonExporter
from src.exporters.markdown import MarkdownExporter
from src.exporters.text import TextExporter

EXPORTERS: dict[str, Exporter] = {
    "text": TextExporter(),
    "csv": CsvExporter(),
    "json": JsonExporter(),
    "markdown": MarkdownExporter(),
}
