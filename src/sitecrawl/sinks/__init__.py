"""Sinks: where finished pages are written, and the writers of every output format."""

from ._atomic import TEMP_MARK, Replacement, open_replacing, replacing
from ._base import Sink
from ._files import CsvSink, FileSink, JsonlSink, JsonSink, ParquetSink, sink_for
from ._formats import (
    CELL_LIMIT,
    CSV_COLUMNS,
    FORMATS,
    LIST_SEPARATOR,
    RowWriter,
    check_outputs,
    csv_cell,
    csv_columns,
    csv_row,
    format_of,
    open_writer,
    open_writers,
    safe_cell,
    write_rows,
    write_rows_async,
)

__all__ = [
    "CELL_LIMIT",
    "CSV_COLUMNS",
    "FORMATS",
    "LIST_SEPARATOR",
    "TEMP_MARK",
    "CsvSink",
    "FileSink",
    "JsonSink",
    "JsonlSink",
    "ParquetSink",
    "Replacement",
    "RowWriter",
    "Sink",
    "check_outputs",
    "csv_cell",
    "csv_columns",
    "csv_row",
    "format_of",
    "open_replacing",
    "open_writer",
    "open_writers",
    "replacing",
    "safe_cell",
    "sink_for",
    "write_rows",
    "write_rows_async",
]
