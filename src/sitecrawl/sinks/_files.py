"""File sinks: CSV (the course's columns first), JSON Lines and JSON, all written streaming."""

from __future__ import annotations

import csv
import sys
import time
from typing import IO, Any

from .._exceptions import ConfigError
from .._json import dumps
from .._models import PAGE_FIELDS, Page
from ._base import Sink

#: The course's report columns, then every other page field in record order.
COURSE_COLUMNS = {
    "page_url": "url",
    "h1": "h1",
    "first_paragraph": "first_paragraph",
    "outgoing_link_urls": "outgoing_links",
    "image_urls": "image_urls",
}
CSV_COLUMNS: tuple[str, ...] = (
    *COURSE_COLUMNS,
    *(name for name in PAGE_FIELDS if name not in COURSE_COLUMNS.values()),
)
_CSV_SOURCES = tuple(COURSE_COLUMNS.get(column, column) for column in CSV_COLUMNS)
LIST_SEPARATOR = ";"
FLUSH_EVERY = 0.2  # seconds: streamed outputs are at most this far behind the crawl


#: What a spreadsheet runs as a formula when a cell starts with it (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a ``'``."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def _cell(item: object) -> str:
    """A list item in a CSV cell: a redirect hop ``(url, status)`` reads ``url 301``."""
    return " ".join(map(str, item)) if isinstance(item, tuple | list) else str(item)


def csv_row(record: dict[str, Any]) -> list[str]:
    """One CSV row from a page dict: lists joined by ``;``, None as an empty cell, formulas
    neutralized (:func:`safe_cell`)."""
    return [csv_cell(record.get(source)) for source in _CSV_SOURCES]


def csv_cell(value: object) -> str:
    """A value as a CSV cell: None empty, lists joined by ``;`` (a pair ``(url, 301)`` reads
    ``url 301``), formulas neutralized."""
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return safe_cell(LIST_SEPARATOR.join(_cell(item) for item in value))
    return safe_cell(str(value))


class _FileSink(Sink):
    def __init__(self, path: str) -> None:
        self._own = path != "-"
        self._out: IO[str] = (
            open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed in close()
            if self._own
            else sys.stdout
        )

    def close(self) -> None:
        if self._own:
            self._out.close()
        else:
            self._out.flush()


class CsvSink(_FileSink):
    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._writer = csv.writer(self._out)
        self._writer.writerow(CSV_COLUMNS)

    def write(self, page: Page) -> None:
        self._writer.writerow(csv_row(page.to_dict()))


class JsonlSink(_FileSink):
    """One JSON object per line, flushed at least every :data:`FLUSH_EVERY` seconds so a
    reader (or ``-o -``) sees pages as they complete."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._flushed = time.monotonic()

    def write(self, page: Page) -> None:
        self._out.write(dumps(page.to_dict()) + "\n")
        now = time.monotonic()
        if now - self._flushed >= FLUSH_EVERY:
            self._out.flush()
            self._flushed = now


class JsonSink(_FileSink):
    """A JSON array, written element by element so memory stays flat."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self._out.write("[")
        self._first = True

    def write(self, page: Page) -> None:
        self._out.write(("\n" if self._first else ",\n") + dumps(page.to_dict()))
        self._first = False

    def close(self) -> None:
        self._out.write("\n]\n")
        super().close()


_BY_SUFFIX: dict[str, type[_FileSink]] = {".csv": CsvSink, ".jsonl": JsonlSink, ".json": JsonSink}


def sink_for(path: str) -> Sink:
    """Open the sink that a path's extension names; ``-`` streams JSON Lines to stdout.

    Raises :class:`ConfigError` for an unknown extension and ``OSError`` when the file
    cannot be written.
    """
    if path == "-":
        return JsonlSink(path)
    for suffix, kind in _BY_SUFFIX.items():
        if path.lower().endswith(suffix):
            return kind(path)
    raise ConfigError(f"unknown output format for {path!r} (use .csv, .jsonl or .json)")
