"""The report of a state file, built from the store in two streamed passes (report/_build.py)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from sitecrawl.audit import crawl_issues, fill_inlinks, site_rows
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.report import ReportData, render_report, store_report_data

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
    fill_inlinks(pages)  # as the report of a crawl's records in memory
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
    # The issues table (export -t issues reads the streamed data) is the full crawl's too.
    issues = crawl_issues(full.pages, full.links, full.images, start_url=base_url)
    assert (
        issues
        and crawl_issues(streamed.pages, streamed.links, streamed.images, start_url=base_url)
        == issues
    )


async def test_a_referrer_says_when_javascript_added_its_link(tmp_path: Path) -> None:
    """A rendered page's link that JavaScript added to a broken page is a ``js`` referrer, in
    the report of the state file as in the report of the crawl's own records."""
    from sitecrawl import Page, Request
    from sitecrawl._urls import url_key
    from sitecrawl.audit import audit

    base = "http://site.test/"
    app = Page(
        url=base,
        status=200,
        depth=0,
        rendered=True,
        js_links=[base + "gone"],
        links=[(base + "gone", "by script", None, "a"), (base + "old", "in HTML", None, "a")],
    )
    gone = Page(url=base + "gone", status=404, error="HTTP 404", error_kind="http_status", depth=1)
    old = Page(
        url=base + "old",
        status=404,
        error="HTTP 404",
        error_kind="http_status",
        depth=1,
        links=[(base + "gone", "from a 404", None, "a")],  # not rendered: html
    )
    async with SqliteFrontier(tmp_path / "s.db", base_url=base) as store:
        await store.add([Request(url=p.url, key=url_key(p.url), depth=0) for p in (app, gone, old)])
        for page in (app, gone, old):
            request = await store.next()
            assert request is not None
            await store.mark_done(request, page)
        streamed = await store_report_data(store)
    rows = site_rows([app, gone, old], base)
    for links in (streamed.links, rows.links):
        found = audit(streamed.pages, links, (), start_url=base)
        referrers = {b.target_url: b.referrers for b in found.broken_links}
        assert [(r.source_url, r.source) for r in referrers[base + "gone"]] == [
            (base, "js"),
            (base + "old", "html"),
        ]
        assert [(r.source_url, r.source) for r in referrers[base + "old"]] == [(base, "html")]
