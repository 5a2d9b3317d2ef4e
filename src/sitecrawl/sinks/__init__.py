"""Sinks: where finished pages are written, and the writers of every output format."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._atomic import TEMP_MARK as TEMP_MARK
    from ._atomic import Replacement as Replacement
    from ._atomic import open_replacing as open_replacing
    from ._atomic import replacing as replacing
    from ._base import Sink as Sink
    from ._files import SINKS as SINKS
    from ._files import CsvSink as CsvSink
    from ._files import FileSink as FileSink
    from ._files import JsonlSink as JsonlSink
    from ._files import JsonSink as JsonSink
    from ._files import ParquetSink as ParquetSink
    from ._files import SinkFactory as SinkFactory
    from ._files import check_sinks as check_sinks
    from ._files import sink_for as sink_for
    from ._formats import CELL_LIMIT as CELL_LIMIT
    from ._formats import CSV_COLUMNS as CSV_COLUMNS
    from ._formats import FORMATS as FORMATS
    from ._formats import LIST_SEPARATOR as LIST_SEPARATOR
    from ._formats import RowWriter as RowWriter
    from ._formats import check_outputs as check_outputs
    from ._formats import csv_cell as csv_cell
    from ._formats import csv_columns as csv_columns
    from ._formats import csv_row as csv_row
    from ._formats import format_of as format_of
    from ._formats import open_writer as open_writer
    from ._formats import open_writers as open_writers
    from ._formats import safe_cell as safe_cell
    from ._formats import write_rows as write_rows
    from ._formats import write_rows_async as write_rows_async
    from ._tables import TABLES as TABLES
    from ._tables import TableSpec as TableSpec
    from ._tables import pages_table as pages_table
    from ._tables import store_rows as store_rows

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "CELL_LIMIT": "._formats",
    "CSV_COLUMNS": "._formats",
    "CsvSink": "._files",
    "FORMATS": "._formats",
    "FileSink": "._files",
    "JsonSink": "._files",
    "JsonlSink": "._files",
    "LIST_SEPARATOR": "._formats",
    "ParquetSink": "._files",
    "Replacement": "._atomic",
    "RowWriter": "._formats",
    "SINKS": "._files",
    "Sink": "._base",
    "SinkFactory": "._files",
    "TABLES": "._tables",
    "TEMP_MARK": "._atomic",
    "TableSpec": "._tables",
    "check_outputs": "._formats",
    "check_sinks": "._files",
    "csv_cell": "._formats",
    "csv_columns": "._formats",
    "csv_row": "._formats",
    "format_of": "._formats",
    "open_replacing": "._atomic",
    "open_writer": "._formats",
    "open_writers": "._formats",
    "pages_table": "._tables",
    "replacing": "._atomic",
    "safe_cell": "._formats",
    "sink_for": "._files",
    "store_rows": "._tables",
    "write_rows": "._formats",
    "write_rows_async": "._formats",
}

__all__ = [
    "CELL_LIMIT",
    "CSV_COLUMNS",
    "FORMATS",
    "LIST_SEPARATOR",
    "SINKS",
    "TABLES",
    "TEMP_MARK",
    "CsvSink",
    "FileSink",
    "JsonSink",
    "JsonlSink",
    "ParquetSink",
    "Replacement",
    "RowWriter",
    "Sink",
    "SinkFactory",
    "TableSpec",
    "check_outputs",
    "check_sinks",
    "csv_cell",
    "csv_columns",
    "csv_row",
    "format_of",
    "open_replacing",
    "open_writer",
    "open_writers",
    "pages_table",
    "replacing",
    "safe_cell",
    "sink_for",
    "store_rows",
    "write_rows",
    "write_rows_async",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
