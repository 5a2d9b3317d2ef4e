"""Every field list is derived from the page record's field metadata (sitecrawl._fields): the
diff's columns and kinds, the rendered-vs-raw comparison, the audit's text checks, the report's
change tables and page columns, the CSV's course columns and the parser's answer. And one
``links_of`` gives a page's link rows to the export, the audit and the report alike."""

from __future__ import annotations

import csv
import dataclasses
import json
import typing
from pathlib import Path
from typing import Any

from aiohttp import web

from conftest import ServeFn
from sitecrawl import Page, crawl_site_async
from sitecrawl._cli import main
from sitecrawl._diff import CHANGE_KINDS, COLUMNS, KINDS, URL_CHANGES, DiffRow, compare
from sitecrawl._fields import SEVERITIES, ChangeKind
from sitecrawl._models import (
    AUDIT_TEXTS,
    DIFF_FIELDS,
    FIELD_CHANGES,
    FIELD_INFO,
    PAGE_FIELDS,
    PARSED_FIELDS,
    RENDER_COMPARED,
    REPORT_COLUMNS,
)
from sitecrawl.audit import TEXT_FIELDS, audit, site_rows
from sitecrawl.frontier import SqliteFrontier
from sitecrawl.parse import Extracted
from sitecrawl.parse._extract import parse_html
from sitecrawl.render._detect import COMPARED, changes
from sitecrawl.report import store_report_data
from sitecrawl.report._changes import TITLES
from sitecrawl.report._table import ColumnType
from sitecrawl.report._tables import FIELD_LABELS, PAGE_COLUMNS
from sitecrawl.sinks import CSV_COLUMNS, TABLES, store_rows

U = "https://site.test/"


def test_the_diff_reads_and_names_what_the_fields_declare() -> None:
    """The diff reads every field marked ``diff`` and nothing else; each kind a field
    declares is a kind of the diff with its severity, and has a table in the report."""
    assert COLUMNS == DIFF_FIELDS
    assert DiffRow._fields == ("key", "url", *DIFF_FIELDS)  # type: ignore[attr-defined]
    assert set(FIELD_CHANGES) <= set(DIFF_FIELDS)
    declared = [*URL_CHANGES, *FIELD_CHANGES.values()]
    assert {kind.name: kind.severity for kind in declared} == KINDS
    assert len({kind.name for kind in declared}) == len(declared)  # each kind declared once
    # Most severe first: ranks unique and rising, severities never less severe later.
    ranks = [kind.rank for kind in CHANGE_KINDS]
    assert ranks == sorted(set(ranks))
    severities = [SEVERITIES.index(kind.severity) for kind in CHANGE_KINDS]
    assert severities == sorted(severities)
    assert {kind.name: (kind.title, kind.description) for kind in declared} == TITLES
    # The kinds of before the metadata keep their order (a field adds its kind by its rank).
    before = [
        "new-broken",
        "status",
        "removed",
        "blocked",
        "redirect",
        "noindex",
        "canonical",
        "added",
        "title",
        "h1",
        "meta-description",
        "word-count",
        "extracted",
        "body",
    ]
    assert [kind for kind in KINDS if kind in before] == before


def _row(url: str, **values: Any) -> DiffRow:
    base = {"status": 200, "final_url": url, "indexable": 1, "redirects": 0}
    return DiffRow(url, url, *({**base, **values}.get(name) for name in COLUMNS))


def test_every_field_changed_by_value_is_compared() -> None:
    """Another value of a field whose kind is ``by_value`` is one change of that kind."""
    by_value = {name: kind for name, kind in FIELD_CHANGES.items() if kind.by_value}
    assert set(by_value) >= {"title", "h1", "meta_description", "canonical"}
    for name, kind in by_value.items():
        found = list(compare(_row(U, **{name: "before"}), _row(U, **{name: "after"})))
        assert [(c.kind, c.field, c.old, c.new) for c in found] == [
            (kind.name, name, "before", "after")
        ]
        assert not list(compare(_row(U, **{name: "same"}), _row(U, **{name: "same"})))


def test_the_rendered_dom_is_compared_on_every_field_marked_rendered() -> None:
    """``js_changed`` names each field marked ``rendered`` whose rendered value differs;
    each value compared is one the parser gives (a record field it fills, or its own)."""
    assert COMPARED == RENDER_COMPARED
    assert list(COMPARED) == ["title", "h1", "meta_description", "canonical", "robots"]
    extras = {f.name for f in dataclasses.fields(Extracted)} - {"fields"}
    for name, parsed in COMPARED.items():
        assert parsed in PARSED_FIELDS or parsed in extras, name
        raw = Extracted(dict.fromkeys(PARSED_FIELDS), robots_meta=None)
        rendered = Extracted(dict.fromkeys(PARSED_FIELDS), robots_meta=None)
        if parsed in extras:
            setattr(rendered, parsed, "noindex")
        else:
            rendered.fields[parsed] = "rendered"
        raw.fields["outgoing_links"] = rendered.fields["outgoing_links"] = []
        added, changed, values = changes(raw, rendered)
        assert (added, changed, values) == ([], [name], {name: None})


def test_the_audit_checks_the_texts_marked_audit_text() -> None:
    """Each field marked ``audit_text`` is checked for missing values, under its label."""
    assert TEXT_FIELDS == tuple(AUDIT_TEXTS) == ("title", "h1", "meta_description")
    assert FIELD_LABELS == AUDIT_TEXTS
    page = Page(url=U, final_url=U, status=200, content_type="text/html", title="T", h1="H")
    page.meta_description = "M"
    for name in TEXT_FIELDS:
        empty = dataclasses.replace(page, **{name: None})
        assert audit([empty], []).missing[name] == (U,)
    assert not any(audit([page], []).missing.values())


def test_the_report_and_csv_columns_come_from_the_fields() -> None:
    types = typing.get_args(ColumnType)
    assert all(column.type in types for _, column in REPORT_COLUMNS)
    assert tuple((column.heading, column.type) for _, column in REPORT_COLUMNS) == PAGE_COLUMNS
    assert [heading for heading, _ in PAGE_COLUMNS][:4] == ["URL", "Status", "Depth", "Title"]
    course = {info.course: name for name, info in FIELD_INFO.items() if info.course}
    assert CSV_COLUMNS[: len(course)] == tuple(course)
    left_out = {name for name, info in FIELD_INFO.items() if not info.csv}
    assert left_out == {"markdown"}
    assert set(CSV_COLUMNS) == set(course) | (set(PAGE_FIELDS) - set(course.values()) - left_out)


def test_the_parser_answers_with_the_fields_marked_parsed() -> None:
    """The parser's answer is the record's subset marked ``parsed``, by name, and no second
    list of the record's fields: its own attributes only steer the crawl."""
    data = parse_html('<html lang="en"><title>T</title><h1>H</h1><a href="/a">a</a>', U)
    assert set(data.fields) == set(PARSED_FIELDS)
    assert (data.title, data.h1, data.lang, data.outgoing_links) == ("T", "H", "en", [U + "a"])
    own = {f.name for f in dataclasses.fields(Extracted)}
    # (requisites: what an archive fetches beside the page, never stored: --archive-assets)
    steer = {"fields", "follow_links", "robots_meta", "unconverted", "markdown_error"}
    assert own == steer | {"requisites"}
    assert not own & set(FIELD_INFO)
    # Every field the parser fills is in the record or kept apart (``links``, and the
    # near-duplicate audit's MinHash bytes).
    apart = ("links", "content_minhash")
    assert all(FIELD_INFO[name].record or name in apart for name in PARSED_FIELDS)


def test_change_kinds_are_declared_whole() -> None:
    """A kind without a title would be a report table without a heading."""
    for kind in (*URL_CHANGES, *FIELD_CHANGES.values()):
        assert isinstance(kind, ChangeKind)
        assert kind.title and kind.description.endswith(".") and kind.severity in SEVERITIES


def redirect_app() -> web.Application:
    """``/`` links to ``/old`` (-> ``/new``, also linked: crawled at its own URL) and
    ``/moved`` (-> ``/landing``, linked nowhere: crawled only through the redirect)."""

    async def home(request: web.Request) -> web.Response:
        body = '<title>Home</title><a href="/old">old</a><a href="/moved">moved</a>'
        return web.Response(text=body + '<a href="/new">new</a>', content_type="text/html")

    async def new(request: web.Request) -> web.Response:
        body = '<title>New</title><a href="/a">a</a><img src="/n.png" alt="n">'
        return web.Response(text=body, content_type="text/html")

    async def landing(request: web.Request) -> web.Response:
        body = '<title>Landing</title><a href="/b">b</a><img src="/l.png" alt="l">'
        return web.Response(text=body, content_type="text/html")

    async def leaf(request: web.Request) -> web.Response:
        return web.Response(text="<title>Leaf</title>", content_type="text/html")

    async def old(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/new")

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/landing")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/new", new)
    app.router.add_get("/landing", landing)
    app.router.add_get("/a", leaf)
    app.router.add_get("/b", leaf)
    app.router.add_get("/old", old)
    app.router.add_get("/moved", moved)
    return app


async def test_export_audit_and_report_count_a_pages_links_alike(
    serve: ServeFn, tmp_path: Path
) -> None:
    """A redirected page's links count from where it ended (none when that page was crawled
    at its own URL too) in the export's links and images tables, the audit's rows and the
    report's: the three are one ``links_of``."""
    server = serve(redirect_app())
    state = tmp_path / "s.db"
    await crawl_site_async(server.url + "/", state=str(state), link_details=True)
    async with SqliteFrontier(state, create=False) as store:
        assert store.base_url is not None
        pages = [page async for page in store.read_pages()]
        exported = [row async for row in store_rows(TABLES["links"], store)]
        images = [row async for row in store_rows(TABLES["images"], store)]
        report = await store_report_data(store)
        rows = site_rows(pages, store.base_url)
    s = server.url
    assert {p.url: p.final_url for p in pages if p.redirects} == {
        s + "/old": s + "/new",
        s + "/moved": s + "/landing",
    }
    export_links = {(r["source_url"], r["target_url"], r["kind"]) for r in exported}
    audit_links = {(r.source_url, r.target_url, r.kind) for r in rows.links}
    assert export_links == audit_links
    sources = {source for source, _, _ in export_links}
    assert sources == {s + "/", s + "/new", s + "/landing"}  # not /old, not /moved
    assert (s + "/landing", s + "/b", "a") in export_links
    assert {(r.source_url, r.target_url, r.kind) for r in report.links} <= export_links
    export_images = {(r["page_url"], r["src"], r["alt"]) for r in images}
    assert export_images == {(i.page_url, i.src, i.alt) for i in rows.images}
    assert export_images == {(i.page_url, i.src, i.alt) for i in report.images}
    assert export_images == {(s + "/new", s + "/n.png", "n"), (s + "/landing", s + "/l.png", "l")}


def og_app(version: dict[str, int]) -> web.Application:
    """A page whose ``og:title`` changes with ``version``, beside its title that does not."""

    async def home(request: web.Request) -> web.Response:
        og = f'<meta property="OG:title" content=" Shared v{version["v"]} ">'
        body = f'<head><title>Home</title>{og}<meta property="og:title" content="second">'
        return web.Response(text=body + "</head><p>Same words</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", home)
    return app


def test_og_title_is_extracted_exported_and_diffed(serve: ServeFn, tmp_path: Path) -> None:
    """A field declared on the record with its extraction (``og_title``): crawled, in every
    output, stored, and another value is an ``og-title`` change (info) in the diff."""
    assert parse_html("<title>T</title>", U).fields["og_title"] is None
    version = {"v": 1}
    server = serve(og_app(version))
    state, out = str(tmp_path / "s.db"), tmp_path / "pages.jsonl"
    crawl = ["crawl", server.url + "/", "--state", state, "-q"]
    assert main([*crawl, "-o", str(out), "-o", str(tmp_path / "pages.csv")]) == 0
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (record["title"], record["og_title"]) == ("Home", "Shared v1")
    with (tmp_path / "pages.csv").open(encoding="utf-8", newline="") as handle:
        assert [row["og_title"] for row in csv.DictReader(handle)] == ["Shared v1"]
    version["v"] = 2
    assert main(crawl) == 0
    changes_out = tmp_path / "changes.jsonl"
    assert main(["diff", state, "-q", "-o", str(changes_out)]) == 0  # info fails nothing
    rows = [json.loads(line) for line in changes_out.read_text(encoding="utf-8").splitlines()]
    og = [row for row in rows if row["kind"] == "og-title"]
    assert [(r["field"], r["old"], r["new"], r["severity"]) for r in og] == [
        ("og_title", "Shared v1", "Shared v2", "info")
    ]
    assert main(["diff", state, "-q", "--fail-on", "og-title"]) == 1
