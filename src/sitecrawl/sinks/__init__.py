"""Sinks: where finished pages are written."""

from ._base import Sink
from ._export import EXPORT_SUFFIXES, write_table
from ._files import (
    CSV_COLUMNS,
    CsvSink,
    JsonlSink,
    JsonSink,
    csv_cell,
    csv_row,
    safe_cell,
    sink_for,
)

__all__ = [
    "CSV_COLUMNS",
    "EXPORT_SUFFIXES",
    "CsvSink",
    "JsonSink",
    "JsonlSink",
    "Sink",
    "csv_cell",
    "csv_row",
    "safe_cell",
    "sink_for",
    "write_table",
]
