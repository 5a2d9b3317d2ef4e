"""Writing a whole table (:mod:`sitecrawl._tables`) to a file: CSV, JSON Lines, JSON, Parquet.

The format comes from the extension. CSV cells are text (lists joined by ``;``, formulas
neutralized); JSON keeps types; Parquet writes the table's typed schema, in row groups, with
pyarrow, which is imported here only: without the ``[parquet]`` extra, :class:`ConfigError`
says what to install.
"""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import IO, Any

from .._exceptions import ConfigError
from .._json import dumps as to_json
from .._tables import ColumnType, Row, TableSpec
from ._files import csv_cell

EXPORT_SUFFIXES = (".csv", ".jsonl", ".json", ".parquet")
PARQUET_HINT = "pip install 'sitecrawl[parquet]'"
_BATCH = 50_000


def write_table(path: str, table: TableSpec, rows: Iterable[Row]) -> int:
    """Write ``rows`` of ``table`` to ``path`` (``-``: JSON Lines on stdout); return how many.

    Raises :class:`ConfigError` for an unknown extension or a missing pyarrow, ``OSError``
    when the file cannot be written."""
    suffix = next((s for s in EXPORT_SUFFIXES if path.lower().endswith(s)), None)
    if path == "-":
        suffix = ".jsonl"
    if suffix is None:
        raise ConfigError(
            f"unknown output format for {path!r} (use {', '.join(EXPORT_SUFFIXES[:-1])}"
            f" or {EXPORT_SUFFIXES[-1]})"
        )
    if suffix == ".parquet":
        return _write_parquet(path, table, rows)
    count = 0
    with _text_out(path) as out:
        if suffix == ".csv":
            writer = csv.writer(out)
            writer.writerow(table.names)
            for row in rows:
                writer.writerow([csv_cell(row[name]) for name in table.names])
                count += 1
        elif suffix == ".jsonl":
            for row in rows:
                out.write(to_json(row) + "\n")
                count += 1
        else:
            out.write("[")
            for row in rows:
                out.write(("\n" if count == 0 else ",\n") + to_json(row))
                count += 1
            out.write("\n]\n")
    return count


@contextmanager
def _text_out(path: str) -> Iterator[IO[str]]:
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8", newline="") as out:
        yield out


def _import_pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigError(f"writing .parquet needs pyarrow: {PARQUET_HINT}") from None
    return pyarrow


def _write_parquet(path: str, table: TableSpec, rows: Iterable[Row]) -> int:
    pa = _import_pyarrow()
    schema = pa.schema([(name, _arrow_type(pa, kind)) for name, kind in table.columns])
    converters = [
        (name, _hops if kind == "hops" else _pairs if kind == "pairs" else None)
        for name, kind in table.columns
    ]
    count = 0
    iterator = iter(rows)
    with pa.parquet.ParquetWriter(path, schema) as writer:
        while batch := list(islice(iterator, _BATCH)):
            columns = {
                name: [row[name] for row in batch]
                if convert is None
                else [convert(row[name]) for row in batch]
                for name, convert in converters
            }
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
            count += len(batch)
    return count


def _hops(value: Any) -> list[dict[str, Any]]:
    return [{"url": url, "status": status} for url, status in value or ()]


def _pairs(value: Any) -> list[dict[str, Any]]:
    return [{"lang": lang, "url": url} for lang, url in value or ()]


def _arrow_type(pa: Any, kind: ColumnType) -> Any:
    simple = {
        "str": pa.string(),
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
