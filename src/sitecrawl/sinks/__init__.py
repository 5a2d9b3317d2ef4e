"""Sinks: where finished pages are written."""

from ._atomic import TEMP_MARK, Replacement, open_replacing, replacing
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
    "TEMP_MARK",
    "CsvSink",
    "JsonSink",
    "JsonlSink",
    "Replacement",
    "Sink",
    "csv_cell",
    "csv_row",
    "open_replacing",
    "replacing",
    "safe_cell",
    "sink_for",
    "write_table",
]
