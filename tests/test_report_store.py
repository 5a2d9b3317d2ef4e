"""The report of a state file, built from the store in two streamed passes (report/_build.py)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from sitecrawl.frontier import SqliteFrontier
from sitecrawl.report import ReportData, render_report
from sitecrawl.report._build import store_report_data
from sitecrawl.sinks._tables import site_rows

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from big_state import write


async def test_the_report_of_a_store_keeps_only_the_links_the_audit_needs(
    tmp_path: Path,
) -> None:
    """Built from a state file in two streamed passes (the links to pages that failed or
    redirected, one navigation link to each other page), the report is the one built from
    every link."""
    path = tmp_path / "crawl.db"
    await write(path, pages=600, links=12, seed=3)
    async with SqliteFrontier(path, create=False) as store:
        pages = [page async for page in store.read_pages()]
        base_url, seconds = store.base_url, await store.crawl_seconds()
        streamed = await store_report_data(store)
    assert base_url is not None
    rows = site_rows(pages, base_url)
    full = ReportData.build(
        base_url=base_url,
        pages=rows.pages,
        links=rows.links,
        images=rows.images,
        duration_s=seconds,
    )
    assert len(streamed.links) < len(full.links) / 3
    when = datetime(2026, 1, 1, tzinfo=UTC)
    assert render_report(streamed, generated_at=when) == render_report(full, generated_at=when)
