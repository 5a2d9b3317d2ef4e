"""A crawl's tables as the API sends them: the pages (a column per extraction rule) and the
issues, read from its page store by the export code (``sitecrawl export``'s:
:func:`sitecrawl.sinks.store_rows`, :func:`sitecrawl.report.store_issue_rows`), streamed as
JSON Lines or CSV row by row, or as Parquet (written whole: its footer is last); ``fields``
cuts them to the columns asked for."""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from .._exceptions import SitecrawlError
from .._json import dump_line
from ._options import config_from_options

if TYPE_CHECKING:
    from ..sinks import TableSpec
    from ._crawls import Crawl

FORMATS = {
    "jsonl": "application/x-ndjson",
    "csv": "text/csv",
    "parquet": "application/vnd.apache.parquet",
}


class BadRequest(SitecrawlError):
    """A request the API cannot take (400)."""


def table_of(crawl: Crawl, name: str, fields: str | None) -> TableSpec:
    """The crawl's table (the pages: a column per extraction rule), cut to ``fields``."""
    from ..sinks import TABLES, TableSpec, pages_table

    if name == "pages":
        rules = config_from_options(crawl.record.url, crawl.record.options).extract
        table = pages_table(rules)
    else:
        table = TABLES[name]
    if not fields:
        return table
    wanted = [item.strip() for item in fields.split(",") if item.strip()]
    unknown = [item for item in wanted if item not in table.names]
    if unknown:
        raise BadRequest(f"no such field in the {name} table: {', '.join(unknown)}")
    kept = tuple(column for column in table.columns if column[0] in wanted)
    return TableSpec(table.name, kept, frozenset())


def rows_of(table: TableSpec, store: Any) -> AsyncIterator[dict[str, Any]]:
    from ..report import store_issue_rows
    from ..sinks import TABLES, store_rows

    if table.name == "issues":
        return store_issue_rows(store)
    return store_rows(table if table.name == "pages" else TABLES[table.name], store)


def cell(row: dict[str, Any], name: str) -> Any:
    """A row's value of column ``name`` (``x:NAME``: an extraction rule's, in ``extracted``)."""
    if name.startswith("x:") and name not in row:
        return (row.get("extracted") or {}).get(name[2:])
    return row.get(name)


async def jsonl(
    rows: AsyncIterator[dict[str, Any]], names: tuple[str, ...] | None
) -> AsyncIterator[bytes]:
    async for row in rows:
        yield dump_line(row if names is None else {key: cell(row, key) for key in names})


async def csv_text(
    rows: AsyncIterator[dict[str, Any]], table: TableSpec, names: tuple[str, ...] | None
) -> AsyncIterator[str]:
    """The table's CSV as ``sitecrawl export`` writes it; with ``names``, those columns."""
    from ..sinks import csv_cell, csv_columns, csv_row

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(list(names) if names else [heading for heading, _ in csv_columns(table)])
    async for row in rows:
        if names:
            writer.writerow([csv_cell(cell(row, name)) for name in names])
        else:
            writer.writerow(csv_row(row, table))
        if out.tell() > 65536:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()


async def parquet(rows: AsyncIterator[dict[str, Any]], table: TableSpec) -> AsyncIterator[bytes]:
    """Parquet is written whole (its footer is last): into a temporary file, then sent."""
    from ..sinks import open_writer

    with tempfile.TemporaryDirectory(prefix="sitecrawl-serve-") as where:
        path = os.path.join(where, "table.parquet")
        writer = open_writer(path, table)
        try:
            async for row in rows:
                writer.write(row)
        except BaseException:
            writer.discard()
            raise
        writer.close()
        with open(path, "rb") as file:
            while chunk := file.read(1 << 16):
                yield chunk
