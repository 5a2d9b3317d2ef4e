"""Sinks: where finished pages are written."""

from ._base import Sink
from ._files import CSV_COLUMNS, CsvSink, JsonlSink, JsonSink, csv_row, sink_for

__all__ = ["CSV_COLUMNS", "CsvSink", "JsonSink", "JsonlSink", "Sink", "csv_row", "sink_for"]
