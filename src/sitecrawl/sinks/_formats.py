"""One writer per output format, over rows of a table (:mod:`sitecrawl.sinks._tables`): CSV, JSON
Lines, JSON, Parquet. A crawl's ``-o`` and ``export`` both write through these.

The format comes from the extension (:data:`FORMATS`, the one table of them); ``-`` is JSON
Lines on stdout. Every writer streams: it holds one row at a time (Parquet: one row group of
at most :data:`ROWS_PER_GROUP` rows), and a file appears at its path, whole, only when the
writer is closed (:mod:`._atomic`); :meth:`RowWriter.discard` leaves the path as it was.

CSV cells are text: lists one item per line (a newline, which a serialized URL cannot hold),
a redirect hop ``url 301``, formulas neutralized (:func:`safe_cell`), and a cell longer than
Excel's 32,767 characters cut with a visible marker (the JSON formats and Parquet keep the whole
value). JSON keeps types; Parquet writes the table's typed schema with pyarrow, imported here
only: without the ``[parquet]`` extra, :class:`ConfigError` says what to install.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import os
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any

from .._exceptions import ConfigError
from .._json import dump_line, dumps
from .._models import COURSE_COLUMNS as PAGE_COURSE_COLUMNS
from ._atomic import Replacement, located
from ._tables import EXTRACT_PREFIX, PAGES, ColumnType, Row, TableSpec, cell

#: The course's report columns (heading -> field: the record's fields marked ``course``), then
#: every other page field in record order (CSV only; but ``markdown``, unless asked for:
#: :attr:`~._tables.TableSpec.csv_left_out`).
COURSE_COLUMNS = PAGE_COURSE_COLUMNS
CSV_COLUMNS: tuple[str, ...] = (
    *COURSE_COLUMNS,
    *(
        name
        for name in PAGES.names
        if name not in COURSE_COLUMNS.values() and name not in PAGES.csv_left_out
    ),
)
LIST_SEPARATOR = "\n"
#: The most characters a spreadsheet cell holds (Excel); longer cells are cut, with a marker.
CELL_LIMIT = 32_767
#: What a spreadsheet runs as a formula when a cell starts with it (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
FLUSH_EVERY = 0.2  # seconds: streamed JSON Lines are at most this far behind the crawl
#: The JSON Lines file's buffer: records are ~4 KB, so the default 8 KiB buffer made one
#: write() system call a record.
JSONL_BUFFER = 1 << 18
ROWS_PER_GROUP = 10_000
PARQUET_HINT = "pip install 'sitecrawl[parquet]'"


def safe_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a ``'``."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _item(item: object) -> str:
    """A list item in a CSV cell: a redirect hop ``(url, status)`` reads ``url 301``, an
    object (a structured-data item) its JSON."""
    if isinstance(item, dict):
        return dumps(item)
    return " ".join(map(str, item)) if isinstance(item, tuple | list) else str(item)


def csv_cell(value: object) -> str:
    """A value as a CSV cell: None empty, lists one item per line (a pair ``(url, 301)`` reads
    ``url 301``), formulas neutralized, at most :data:`CELL_LIMIT` characters (a longer one
    ends with ``[cut: N characters in all]``)."""
    if value is None:
        return ""
    if isinstance(value, dict):
        text = safe_cell(dumps(value)) if value else ""
    elif isinstance(value, list | tuple):
        text = safe_cell(LIST_SEPARATOR.join(_item(item) for item in value))
    else:
        text = safe_cell(str(value))
    if len(text) > CELL_LIMIT:
        marker = f" [cut: {len(text):,} characters in all]"
        text = text[: CELL_LIMIT - len(marker)] + marker
    return text


def csv_columns(table: TableSpec) -> tuple[tuple[str, str], ...]:
    """A table's CSV columns as ``(heading, field)``: the pages table starts with the course's
    columns; the others are their fields, in order; but the table's ``csv_left_out``."""
    left_out = table.csv_left_out
    if table.name == PAGES.name:
        known = {*CSV_COLUMNS, *COURSE_COLUMNS.values()}
        extra = tuple(name for name in table.names if name not in known)
        return tuple(
            (heading, COURSE_COLUMNS.get(heading, heading))
            for heading in (*CSV_COLUMNS, *extra)
            if (heading in COURSE_COLUMNS or heading in table.names) and heading not in left_out
        )
    return tuple((name, name) for name in table.names if name not in left_out)


def csv_row(record: Row, table: TableSpec = PAGES) -> list[str]:
    """One CSV row of ``table`` (by default a page record) as :func:`csv_cell` texts."""
    return [csv_cell(cell(record, source)) for _, source in csv_columns(table)]


class RowWriter(ABC):
    """Rows of one table into one output. :meth:`close` finishes the format and puts the file
    in place; :meth:`discard` drops it. ``OSError`` when the file cannot be written, its
    ``filename`` the output's path (``-``: stdout), so that a full disk says which."""

    def __init__(self, path: str, table: TableSpec) -> None:
        self.path = path
        self.table = table
        self._replacement = None if path == "-" else Replacement(path)

    def write(self, row: Row) -> None:
        try:
            self._write(row)
        except OSError as exc:
            raise self._located(exc) from exc

    @abstractmethod
    def _write(self, row: Row) -> None: ...

    def _located(self, exc: OSError) -> OSError:
        """``exc`` naming this output (a write or flush error names no file)."""
        return located(exc, self.path)

    @abstractmethod
    def _finish(self) -> None:
        """Write the format's end and close the file (not stdout)."""

    @abstractmethod
    def _abandon(self) -> None:
        """Close the file without finishing it."""

    def close(self) -> None:
        try:
            self._finish()
            if self._replacement is not None:
                self._replacement.commit()
        except OSError as exc:
            self.discard()
            raise self._located(exc) from exc
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        try:
            # what it still buffers is dropped: the disk that refused it may refuse it again
            with contextlib.suppress(OSError):
                self._abandon()
        finally:
            if self._replacement is not None:
                self._replacement.discard()


class _TextWriter(RowWriter):
    def __init__(self, path: str, table: TableSpec) -> None:
        super().__init__(path, table)
        if self._replacement is None:
            self._out: IO[str] = sys.stdout
        else:
            self._out = open(  # noqa: SIM115 - closed in _finish / _abandon
                self._replacement.temp, "w", encoding="utf-8", newline=""
            )
        self._start()

    def _start(self) -> None:
        """Write the format's beginning."""

    def _end(self) -> None:
        """Write the format's end."""

    def _finish(self) -> None:
        self._end()
        if self._replacement is None:
            self._out.flush()
        else:
            self._out.close()

    def _abandon(self) -> None:
        if self._replacement is not None:
            self._out.close()


class CsvWriter(_TextWriter):
    def _start(self) -> None:
        columns = csv_columns(self.table)
        self._sources = tuple(source for _, source in columns)
        self._writer = csv.writer(self._out)
        self._writer.writerow([heading for heading, _ in columns])

    def _write(self, row: Row) -> None:
        self._writer.writerow([csv_cell(cell(row, source)) for source in self._sources])


class JsonlWriter(RowWriter):
    """One JSON object per line, flushed at least every :data:`FLUSH_EVERY` seconds, so a
    reader of ``-o -`` (or of the temporary file) sees rows as they come. Written as bytes:
    the encoder's UTF-8 goes to the file as it is (to a ``sys.stdout`` without a binary
    buffer, as text)."""

    def __init__(self, path: str, table: TableSpec) -> None:
        super().__init__(path, table)
        self._file: IO[bytes] | None = None
        if self._replacement is not None:
            # closed in _finish / _abandon
            self._file = open(self._replacement.temp, "wb", buffering=JSONL_BUFFER)  # noqa: SIM115
            self._put: Callable[[bytes], object] = self._file.write
            self._flush: Callable[[], None] = self._file.flush
        elif (buffer := getattr(sys.stdout, "buffer", None)) is not None:
            sys.stdout.flush()  # what was printed before comes first
            self._put, self._flush = buffer.write, buffer.flush
        else:
            out = sys.stdout
            self._put, self._flush = (lambda line: out.write(line.decode())), out.flush
        self._flushed = time.monotonic()

    def _write(self, row: Row) -> None:
        self._put(dump_line(row))
        now = time.monotonic()
        if now - self._flushed >= FLUSH_EVERY:
            self._flush()
            self._flushed = now

    def _finish(self) -> None:
        if self._file is None:
            self._flush()
        else:
            self._file.close()

    def _abandon(self) -> None:
        if self._file is not None:
            self._file.close()


class JsonWriter(_TextWriter):
    """A JSON array, written element by element."""

    def _start(self) -> None:
        self._out.write("[")
        self._first = True

    def _write(self, row: Row) -> None:
        self._out.write(("\n" if self._first else ",\n") + dumps(row))
        self._first = False

    def _end(self) -> None:
        self._out.write("\n]\n")


class ParquetWriter(RowWriter):
    """The table's typed schema; rows buffered into row groups of :data:`ROWS_PER_GROUP`."""

    def __init__(self, path: str, table: TableSpec, *, rows_per_group: int = ROWS_PER_GROUP):
        if path == "-":
            raise ConfigError("Parquet cannot go to stdout (- is JSON Lines)")
        self._pa = _import_pyarrow()
        super().__init__(path, table)
        assert self._replacement is not None
        self._schema = self._pa.schema(
            [(name, _arrow_type(self._pa, kind)) for name, kind in table.columns]
        )
        self._convert = [
            (name, (_CONVERTERS if name.startswith(EXTRACT_PREFIX) else _SHAPES).get(kind))
            for name, kind in table.columns
        ]
        #: Column -> values that could not be converted to its type (written as null).
        self.unconverted: dict[str, int] = {}
        self._rows_per_group = rows_per_group
        self._batch: list[Row] = []
        self._writer = self._pa.parquet.ParquetWriter(self._replacement.temp, self._schema)

    def _write(self, row: Row) -> None:
        self._batch.append(row)
        if len(self._batch) >= self._rows_per_group:
            self._flush()

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        if batch:
            columns = {
                name: [cell(row, name) for row in batch]
                if convert is None
                else [self._converted(name, convert, cell(row, name)) for row in batch]
                for name, convert in self._convert
            }
            self._writer.write_table(self._pa.Table.from_pydict(columns, schema=self._schema))

    def _converted(self, name: str, convert: Callable[[Any], Any], value: Any) -> Any:
        try:
            return convert(value)
        except (ValueError, TypeError):
            self.unconverted[name] = self.unconverted.get(name, 0) + 1
            return None

    def _finish(self) -> None:
        self._flush()
        self._writer.close()

    def _abandon(self) -> None:
        self._batch = []
        self._writer.close()


def _import_pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(f"writing .parquet needs pyarrow: {PARQUET_HINT}") from None
    return pyarrow


def _hops(value: Any) -> list[dict[str, Any]]:
    return [{"url": url, "status": status} for url, status in value or ()]


def _pairs(value: Any) -> list[dict[str, Any]]:
    return [{"lang": lang, "url": url} for lang, url in value or ()]


def _json(value: Any) -> str | None:
    return value if value is None or isinstance(value, str) else dumps(value)


def _typed(kind: str) -> Callable[[Any], Any]:
    from ..parse import convert

    def to(value: Any) -> Any:
        if value is None:
            return None
        converted = convert(value, kind)
        return datetime.date.fromisoformat(converted) if kind == "date" else converted

    return to


def _strs(value: Any) -> list[str] | None:
    if value is None:
        return None
    return [item if isinstance(item, str) else dumps(item) for item in value]


#: How a record column's values become what pyarrow takes for its type.
_SHAPES: dict[str, Callable[[Any], Any]] = {"hops": _hops, "pairs": _pairs, "json": _json}
#: The same for an extraction rule's column, whose values may be of any type: one that cannot
#: be converted (ValueError, TypeError) is written as null and counted.
_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    **_SHAPES,
    "strs": _strs,
    **{kind: _typed(kind) for kind in ("str", "int", "float", "bool", "date")},
}


def _arrow_type(pa: Any, kind: ColumnType) -> Any:
    simple = {
        "str": pa.string(),
        "json": pa.string(),
        "date": pa.date32(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "strs": pa.list_(pa.string()),
    }
    if kind in simple:
        return simple[kind]
    if kind == "hops":
        return pa.list_(pa.struct([("url", pa.string()), ("status", pa.int64())]))
    return pa.list_(pa.struct([("lang", pa.string()), ("url", pa.string())]))


#: Every output format, by extension.
FORMATS: dict[str, type[RowWriter]] = {
    ".csv": CsvWriter,
    ".jsonl": JsonlWriter,
    ".json": JsonWriter,
    ".parquet": ParquetWriter,
}


def format_of(path: str, formats: Iterable[str] = FORMATS) -> str:
    """The extension of ``path`` among ``formats`` (:data:`FORMATS`; a crawl's ``-o``: the
    sinks' suffixes, :data:`~._files.SINKS`), ``-``: ``.jsonl``; :class:`ConfigError` for any
    other."""
    if path == "-":
        return ".jsonl"
    found = next((suffix for suffix in formats if path.lower().endswith(suffix)), None)
    if found is None:
        names = list(formats)
        raise ConfigError(
            f"unknown output format for {path!r} (use {', '.join(names[:-1])} or {names[-1]})"
        )
    return found


def check_outputs(
    paths: Sequence[str],
    formats: Iterable[str] = FORMATS,
    *,
    known: Callable[[str], bool] | None = None,
) -> None:
    """Refuse, before anything is written: an unknown format (not among ``formats``), or one
    output named twice (``-o - -o -`` would print every record twice). :class:`ConfigError`.
    ``known``: the outputs known by their name rather than a format (a folder ``DIR/``,
    ``llms.txt``: :func:`~._page_outputs.is_page_output`; a web archive), whose format is
    not checked (but whether they are named twice is)."""
    seen: set[str] = set()
    for path in paths:
        if known is None or not known(path):
            format_of(path, formats)
        same = path if path == "-" else os.path.realpath(path)
        if same in seen:
            shown = "- (stdout)" if path == "-" else repr(path)
            raise ConfigError(f"output {shown} is given twice")
        seen.add(same)


def open_writer(path: str, table: TableSpec, *, format: str | None = None) -> RowWriter:
    """The writer for ``path`` (its format from the extension unless ``format`` names one).
    :class:`ConfigError` for an unknown format or a missing pyarrow; ``OSError`` when the
    file cannot be created (its ``filename`` is ``path``)."""
    kind = FORMATS[format or format_of(path)]
    try:
        return kind(path, table)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, path) from exc


@contextmanager
def open_writers(paths: Sequence[str], table: TableSpec) -> Iterator[list[RowWriter]]:
    """A writer of ``table`` for every path. The files appear only when the block ends
    normally, every row written: on any exception, none does."""
    check_outputs(paths)
    writers: list[RowWriter] = []
    try:
        for path in paths:
            writers.append(open_writer(path, table))
        yield list(writers)
        while writers:
            writers.pop(0).close()
    except BaseException:
        for writer in writers:
            writer.discard()
        raise


def write_rows(paths: Sequence[str], table: TableSpec, rows: Iterable[Row]) -> int:
    """Write ``rows`` of ``table`` to every path at once, in one pass; return how many rows.
    The files appear only when every row is written: on any exception, none does."""
    count = 0
    with open_writers(paths, table) as writers:
        for row in rows:
            for writer in writers:
                writer.write(row)
            count += 1
    return count


async def write_rows_async(paths: Sequence[str], table: TableSpec, rows: AsyncIterable[Row]) -> int:
    """:func:`write_rows` for rows that come streamed (from a page store)."""
    count = 0
    with open_writers(paths, table) as writers:
        async for row in rows:
            for writer in writers:
                writer.write(row)
            count += 1
    return count
