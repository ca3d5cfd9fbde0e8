"""Report exporters, one per output format, registered by name."""

from src.exporters.base import Exporter
from src.exporters.csv import CsvExporter
from src.exporters.text import TextExporter

EXPORTERS: dict[str, Exporter] = {
    "text": TextExporter(),
    "csv": CsvExporter(),
}
