"""The audit's findings on a small literal site whose every problem is known."""

from __future__ import annotations

from typing import Any

import pytest

from sitecrawl import Page
from sitecrawl._pagecodec import from_mapping
from sitecrawl.audit._findings import (
    Audit,
    BrokenLink,
    DuplicateGroup,
    MissingAlt,
    NonIndexablePage,
    Referrer,
    SlowPage,
    audit,
    page_key,
)
from sitecrawl.audit._rows import ImageRow, LinkRow, is_html, links_from_pages, succeeded

S = "https://ex.com"


def page(path: str, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "url": S + path,
        "final_url": S + path,
        "status": 200,
        "content_type": "text/html; charset=utf-8",
        "title": f"Title {path}",
        "h1": f"Heading {path}",
        "meta_description": f"About {path}",
        "response_time_ms": 50.0,
        "size_bytes": 1000,
        "in_sitemap": True,
        "indexable": True,
    }
    row.update(fields)
    return row


PAGES = [
    page("/"),
    page("/about", meta_description=None),
    page("/team", title="Title /about", h1="  ", in_sitemap=False),
    page("/gone", status=404, error="HTTP 404", title=None, in_sitemap=False),
    page("/boom", status=500, error="HTTP 500", title=None, in_sitemap=False),
    page("/timeout", status=None, error="timed out after 10 s", title=None, in_sitemap=False),
    page(
        "/old",
        final_url=S + "/about",
        redirects=[[S + "/old", 301], [S + "/older", 302]],
        title="Title /about",
        meta_description=None,
        in_sitemap=False,
    ),
    page("/moved", final_url=S + "/elsewhere", redirects=[[S + "/moved", 308]], in_sitemap=False),
    page("/slow", response_time_ms=2500.0, meta_description="About  /about"),
    page("/slower", response_time_ms=3000.0, meta_description="About /about"),
    page("/orphan"),
    page("/noindex", indexable=False, in_sitemap=False),
    page("/canon", indexable=False, canonical=S + "/about", in_sitemap=False),
    page("/file.pdf", content_type="application/pdf", title=None, h1=None, in_sitemap=False),
]


def link(source: str, target: str, anchor: str | None = None, **fields: Any) -> dict[str, Any]:
    internal = not target.startswith("http")
    return {
        "source_url": S + source,
        "target_url": target if not internal else S + target,
        "anchor_text": anchor,
        "internal": internal,
        **fields,
    }


LINKS = [
    link("/", "/about", "About us"),
    link("/", "/team", "Team"),
    link("/", "/gone", "Old news"),
    link("/about", "/gone/", "news"),  # trailing slash: the same page
    link("/about", "/gone", "news"),  # the same referrer twice counts once
    link("/team", "/boom", "Crash"),
    link("/", "/timeout", "Slow one"),
    link("/", "/old", "Legacy"),
    link("/team", "/moved", "Moved"),
    link("/", "/slow"),
    link("/", "/slower"),
    link("/", "/noindex"),
    link("/", "/canon"),
    link("/", "/file.pdf", "PDF"),
    link("/orphan", "/orphan", "self"),  # a self link does not make a page linked
    link("/", "https://other.test/x", "Partner", status=503, error="HTTP 503"),
    link("/team", "https://other.test/ok", "Fine", status=200),
    link("/team", "https://other.test/unknown", "Unchecked"),
    link("/about", "/missing.png", None, kind="img", status=404, error="HTTP 404"),
]

IMAGES = [
    {"page_url": S + "/", "src": S + "/logo.png", "alt": "Logo"},
    {"page_url": S + "/", "src": S + "/deco.png", "alt": ""},
    {"page_url": S + "/about", "src": S + "/missing.png"},
]


@pytest.fixture(scope="module")
def found() -> Audit:
    return audit(
        [from_mapping(p) for p in PAGES],
        [LinkRow.from_mapping(x) for x in LINKS],
        [ImageRow.from_mapping(i) for i in IMAGES],
        slow_threshold_ms=1000,
        start_url=S + "/",
    )


def test_broken_links_grouped_by_target_with_referrers(found: Audit) -> None:
    assert list(found.broken_links) == [
        BrokenLink(
            S + "/gone",
            404,
            "HTTP 404",
            True,
            (Referrer(S + "/", "Old news", "a"), Referrer(S + "/about", "news", "a")),
            2,  # distinct pages
            3,  # links
        ),
        BrokenLink(
            S + "/boom", 500, "HTTP 500", True, (Referrer(S + "/team", "Crash", "a"),), 1, 1
        ),
        BrokenLink(
            S + "/missing.png", 404, "HTTP 404", True, (Referrer(S + "/about", None, "img"),), 1, 1
        ),
        BrokenLink(
            S + "/timeout",
            None,
            "timed out after 10 s",
            True,
            (Referrer(S + "/", "Slow one", "a"),),
            1,
            1,
        ),
        BrokenLink(
            "https://other.test/x",
            503,
            "HTTP 503",
            False,
            (Referrer(S + "/", "Partner", "a"),),
            1,
            1,
        ),
    ]
    assert [b.reason for b in found.broken_links] == [
        "HTTP 404",
        "HTTP 500",
        "HTTP 404",
        "timed out after 10 s",
        "HTTP 503",
    ]
    assert found.broken_links


def test_redirect_chains(found: Audit) -> None:
    chains = {c.url: c for c in found.redirect_chains}
    assert set(chains) == {S + "/old", S + "/moved"}
    old = chains[S + "/old"]
    assert old.hops == ((S + "/old", 301), (S + "/older", 302))
    assert (old.final_url, old.final_status) == (S + "/about", 200)
    assert old.referrers == (Referrer(S + "/", "Legacy", "a"),)
    assert found.redirect_chains[0].url == S + "/old"  # the longest chain first


def test_missing_text_fields_cover_successful_html_pages_only(found: Audit) -> None:
    assert found.missing["title"] == ()
    assert found.missing["h1"] == (S + "/team",)  # whitespace only is missing
    # /old redirected to /about, crawled itself: one document, listed once.
    assert found.missing["meta_description"] == (S + "/about",)


def test_duplicates(found: Audit) -> None:
    assert found.duplicates["title"] == (
        DuplicateGroup("title", "Title /about", (S + "/about", S + "/team")),
    )
    assert found.duplicates["h1"] == ()
    assert found.duplicates["meta_description"] == (
        DuplicateGroup("meta_description", "About /about", (S + "/slow", S + "/slower")),
    )


def test_slow_pages_threshold_order_and_limit(found: Audit) -> None:
    assert found.slow_pages == (
        SlowPage(S + "/slower", 3000.0, 1000),
        SlowPage(S + "/slow", 2500.0, 1000),
    )
    rows = [from_mapping(p) for p in PAGES]
    top = audit(rows, [], slow_threshold_ms=2600, slow_limit=5)
    assert [s.url for s in top.slow_pages] == [S + "/slower"]
    limited = audit(rows, [], slow_threshold_ms=0, slow_limit=1)
    assert [s.url for s in limited.slow_pages] == [S + "/slower"]


def test_non_indexable_with_reasons(found: Audit) -> None:
    assert found.non_indexable == (
        NonIndexablePage(S + "/canon", f"canonical: {S}/about"),
        NonIndexablePage(S + "/noindex", "noindex"),
    )


def test_sitemap_versus_links(found: Audit) -> None:
    assert found.has_sitemap
    assert found.sitemap_only == (S + "/orphan",)  # the start page needs no link
    unstarted = audit([from_mapping(p) for p in PAGES], [LinkRow.from_mapping(x) for x in LINKS])
    assert unstarted.sitemap_only == (S + "/", S + "/orphan")
    # /team is linked and missing from the sitemap; /noindex and /canon are not indexable,
    # /moved redirects.
    assert found.links_only == (S + "/team",)


def test_without_sitemap_data_nothing_is_links_only() -> None:
    rows = [from_mapping({**p, "in_sitemap": None}) for p in PAGES]
    result = audit(rows, [LinkRow.from_mapping(x) for x in LINKS])
    assert not result.has_sitemap
    assert result.sitemap_only == result.links_only == ()


def test_images_missing_alt(found: Audit) -> None:
    assert found.images_missing_alt == (
        MissingAlt(S + "/", S + "/deco.png"),
        MissingAlt(S + "/about", S + "/missing.png"),
    )


def test_clean_site_has_no_findings() -> None:
    rows = [from_mapping(page("/")), from_mapping(page("/a", title="Other"))]
    result = audit(rows, [LinkRow.from_mapping(link("/", "/a", "A"))])
    assert not result.broken_links
    assert result.redirect_chains == result.slow_pages == result.non_indexable == ()
    assert all(not v for v in result.missing.values())
    assert all(not v for v in result.duplicates.values())


def test_page_key_is_the_crawlers_dedupe_key() -> None:
    assert page_key("https://ex.com/a/") == page_key("http://ex.com/a#top") == "ex.com/a"
    assert page_key("https://ex.com/?q=1") == "ex.com?q=1"
    assert page_key("not a url") == "not a url"


def test_rows_from_page_records_and_store_rows() -> None:
    record = Page(
        url=S + "/",
        status=200,
        outgoing_links=[S + "/a", "https://other.test/"],
        image_urls=[S + "/i.png"],
    )
    row = from_mapping(record.to_dict())
    assert row.outgoing_links == [S + "/a", "https://other.test/"]
    assert succeeded(row) and is_html(row) and row.redirects == []
    assert not succeeded(Page(url=S + "/", status=304))  # no error, but not a page read
    redirected = Page(url=S + "/old", status=200, redirects=[(S + "/old", 301)], indexable=False)
    assert from_mapping(redirected.to_dict()).redirects == [(S + "/old", 301)]
    assert from_mapping(redirected.to_dict()).indexable is False
    store_row = from_mapping(
        {"url": S + "/", "status": "301", "outgoing_links": "a;b", "redirects": [("x", 301)]}
    )
    assert (store_row.status, store_row.outgoing_links) == (301, ["a", "b"])
    # every field round trips through a record, a JSON Lines line or a CSV row's text alike
    full = from_mapping(
        {"url": S + "/x", "response_time_ms": "1.5", "in_sitemap": True, "h2": '["a", "b"]'}
    )
    assert (full.response_time_ms, full.in_sitemap, full.h2) == (1.5, True, ["a", "b"])
    assert [(x.target_url, x.internal, x.kind) for x in links_from_pages([row])] == [
        (S + "/a", True, "a"),
        ("https://other.test/", False, "a"),
        (S + "/i.png", True, "img"),
    ]
    with pytest.raises(ValueError, match="unknown link kind"):
        LinkRow.from_mapping({"source_url": "a", "target_url": "b", "kind": "video"})
