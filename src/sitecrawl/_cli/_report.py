"""``sitecrawl report STATE.db -o report.html``: the one-file HTML report of a crawl."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ._common import EXIT_OK, UsageError, run_async
from ._ends import machine_failure
from ._redis import check_source, store_command

if TYPE_CHECKING:
    from .._diff import ChangeSet
    from ..report import ReportData
    from ._store import CrawlRecords


def add_command(commands: Any) -> None:
    store_command(
        commands,
        "report",
        "write the HTML report of a crawl's state file",
        _execute,
        output="the HTML file to write (default: STATE's name, STATE.report.html)",
    )


def _execute(args: argparse.Namespace) -> int:
    from .._diff_crawls import previous_changes
    from ..frontier import SqliteFrontier
    from ..report import store_report_data
    from ._store import default_output, open_store, source_args

    check_source(args)
    args.output = args.output or default_output(args, "report.html")

    async def read() -> tuple[ReportData, ChangeSet | None]:
        async with open_store(args) as store:
            data = await store_report_data(store)
            if isinstance(store, SqliteFrontier):  # a state file: it may keep earlier crawls
                return data, previous_changes(store, args.state)
            return data, None

    data, changes = run_async(read())
    write_report_data(data, args.output, source_args(args), changes)
    if not args.quiet:
        print(f"report of {len(data.pages):,} pages: {args.output}", file=sys.stderr)
    return EXIT_OK


async def read_report_data(state: str) -> tuple[ReportData, ChangeSet | None]:
    """The report's data of the crawl in the state file ``state``, read from the store in two
    streamed passes (:mod:`sitecrawl.report._build`), and its changes since the crawl
    before it when the file keeps one."""
    from .._diff_crawls import previous_changes
    from ..frontier import SqliteFrontier
    from ..report import store_report_data

    async with SqliteFrontier(state, create=False) as store:
        return await store_report_data(store), previous_changes(store, state)


def write_report(records: CrawlRecords, path: str, *, export_source: str = "STATE.db") -> None:
    """Render the report of ``records`` (:mod:`sitecrawl.report`) into ``path``; a table
    cut short names ``sitecrawl export EXPORT_SOURCE`` for the rest."""
    from ..audit import fill_inlinks, site_rows
    from ..report import ReportData

    fill_inlinks(records.pages)  # the crawl has ended: every page's links are known
    rows = site_rows(records.pages, records.base_url)
    data = ReportData.build(
        base_url=records.base_url,
        pages=rows.pages,
        links=rows.links,
        images=rows.images,
        duration_s=records.seconds,
    )
    write_report_data(data, path, export_source)


def write_report_data(
    data: ReportData, path: str, export_source: str, changes: ChangeSet | None = None
) -> None:
    """Render ``data`` (and ``changes`` since an earlier crawl) into ``path``, written whole
    or not at all."""
    from ..report import render_report
    from ..sinks import open_replacing

    html = render_report(data, export_source=export_source, changes=changes)
    try:
        with open_replacing(path, "w", encoding="utf-8") as out:
            out.write(html)
    except OSError as exc:
        if machine_failure(exc):
            raise
        raise UsageError(f"cannot write report: {exc.strerror or exc} ({path})") from None
