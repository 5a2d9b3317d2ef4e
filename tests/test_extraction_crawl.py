"""Custom extraction through a crawl: the CLI's -x and --extract-file, every output format,
the state file (stored rules for a resume, export), parser processes, the library."""

from __future__ import annotations

import contextlib
import csv
import json
import sqlite3
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from aiohttp import web
from selectolax.lexbor import LexborHTMLParser

from conftest import ServeFn
from extraction_site import product_pages, shop_app
from sitecrawl import AsyncCrawler, ConfigError, Page, extract_page_data
from sitecrawl._cli import main
from sitecrawl.parse import Extraction
from test_extraction import RULES, reference

TOML = """\
price = { spec = "css:.price@data-price", type = "float" }
tags = "all:css:ul.tags li"
[sku]
spec = 'regex:SKU-(\\d+)'
type = "int"
when = "/p/"
"""


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _number(url: str) -> int | None:
    tail = url.rsplit("/p/", 1)
    return int(tail[1]) if len(tail) == 2 else None


def test_crawl_writes_the_rules_values_into_every_output(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(shop_app(60))
    (tmp_path / "rules.toml").write_text(TOML, encoding="utf-8")
    outs = ["pages.jsonl", "pages.csv", "pages.parquet", "pages.json"]
    argv = ["crawl", site.url, "-p", "2", "--extract-file", "rules.toml", "-x", "ga=" + RULES["ga"]]
    argv += ["-x", "types=" + RULES["ld_types"]]
    assert main([*argv, *(arg for out in outs for arg in ("-o", out))]) == 0
    err = capsys.readouterr().err
    assert "not of their rule's type (null): price: 2" in err  # "n/a" first on pages 0, 55
    pages = product_pages(60)
    records = [json.loads(line) for line in (tmp_path / outs[0]).read_text().splitlines()]
    assert len(records) == 61
    for record in records:
        number = _number(record["url"])
        if number is None:
            assert record["extracted"] == {"price": None, "tags": [], "ga": None, "types": []}
            continue
        want = reference(pages[number])
        price = want["price_attr"]
        got = record["extracted"]
        assert got["price"] == (float(price) if price and price != "n/a" else None)
        assert got["tags"] == want["tags"]
        assert got["ga"] == want["ga"]
        assert got["types"] == want["ld_types"]
        assert got["sku"] == (number if number % 6 else None)
    assert json.loads((tmp_path / outs[3]).read_text()) == records
    with open(tmp_path / outs[1], newline="", encoding="utf-8") as handle:
        rows = {row["page_url"]: row for row in csv.DictReader(handle)}
    assert "extracted" not in next(iter(rows.values()))
    for record in records:
        row, got = rows[record["url"]], record["extracted"]
        assert row["x:price"] == ("" if got["price"] is None else str(got["price"]))
        assert row["x:tags"] == "\n".join(got["tags"])
        assert row["x:sku"] == ("" if got.get("sku") is None else str(got["sku"]))
    table = pq.read_table(tmp_path / outs[2])
    assert str(table.schema.field("x:price").type) == "double"
    assert str(table.schema.field("x:sku").type) == "int64"
    assert str(table.schema.field("x:tags").type.value_type) == "string"
    by_url = dict(zip(table.column("url").to_pylist(), table.to_pylist(), strict=True))
    for record in records:
        assert by_url[record["url"]]["x:price"] == record["extracted"]["price"]
        assert json.loads(by_url[record["url"]]["x:types"]) == record["extracted"]["types"]


def test_the_state_file_stores_values_and_rules_for_a_resume_and_export(
    serve: ServeFn, tmp_path: Path
) -> None:
    site = serve(shop_app(30))
    state = str(tmp_path / "shop.db")
    argv = ["crawl", site.url, "--state", state, "-x", "h1=css:h1.name", "-x", "n=count:css:li"]
    assert main([*argv, "-n", "10"]) == 0
    # Resumed without -x: the rules it began with.
    assert main(["crawl", site.url, "--state", state]) == 0
    with contextlib.closing(sqlite3.connect(state)) as conn:
        stored = [json.loads(text) for (text,) in conn.execute("SELECT extracted FROM pages")]
    assert len(stored) == 31
    assert all(set(values) == {"h1", "n"} for values in stored)
    # The crawl finished: the same command starts crawl 2, with its rules.
    assert main([*argv, "-o", "again.csv"]) == 0
    with open(tmp_path / "again.csv", newline="", encoding="utf-8") as handle:
        assert list(csv.DictReader(handle).fieldnames or [])[-2:] == ["x:h1", "x:n"]
    assert main(["export", state, "-o", "out.jsonl", "-o", "out.csv", "-o", "out.parquet"]) == 0
    table = pq.read_table(tmp_path / "out.parquet")
    assert str(table.schema.field("x:n").type) == "int64"
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as handle:
        rows = {row["page_url"]: row for row in csv.DictReader(handle)}
    records = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    pages = product_pages(30)
    for record in records:
        number = _number(record["url"])
        if number is not None:
            want = reference(pages[number])
            assert record["extracted"] == {"h1": want["name"], "n": want["tag_count"]}
            assert rows[record["url"]]["x:n"] == str(want["tag_count"])


@pytest.mark.parametrize("store", ["sqlite", "redis"])
def test_a_resume_or_join_with_other_extraction_rules_is_refused(
    store: str, serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Extraction rules are stored with the crawl, and a run of it takes them or is refused,
    as its rules are: a SQLite resume and a Redis join alike (same line, same exit code)."""
    from redis_server import shared_server

    site = serve(shop_app(30))
    where = ["--state", str(tmp_path / "shop.db")]
    if store == "redis":
        where = ["--redis", shared_server().url, "--crawl-id", tmp_path.name]
    assert main(["crawl", site.url, *where, "-q", "-n", "10", "-x", "h=css:h1.name"]) == 0
    fetched = len(site.traffic.paths)
    capsys.readouterr()
    assert main(["crawl", site.url, *where, "-x", "t=css:title"]) == 2
    assert capsys.readouterr().err == (
        "sitecrawl: error: this crawl began with -x h=css:h1.name, not -x t=css:title: run it"
        " with the same extraction rules (or none, to take them), or start over with --fresh\n"
    )
    assert len(site.traffic.paths) == fetched
    # Without -x: the stored rules are taken (and said); every page has their values.
    assert main(["crawl", site.url, *where, "-o", "all.jsonl"]) == 0
    err = capsys.readouterr().err
    assert "resumed with the extraction rules this crawl began with: -x h=css:h1.name" in err
    records = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()]
    assert len(records) == (31 if store == "sqlite" else 10)  # Redis keeps the crawl's -n
    assert all(set(record["extracted"]) == {"h"} for record in records)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-x", "p=css:a["], "extract rule 'p' (css:a[)"),
        (["-x", "p=xpath://a["], "extract rule 'p' (xpath://a[)"),
        (["-x", "p=regex:(a"], "extract rule 'p' (regex:(a)"),
        (["-x", "p=jsonld:[?"], "extract rule 'p' (jsonld:[?)"),
        (["-x", "p=some:css:a"], "unknown kind 'some'"),
        (["-x", "css:a"], "expected NAME=SPEC"),
        (["--extract-file", "missing.toml"], "--extract-file missing.toml"),
    ],
)
def test_a_bad_rule_exits_2_with_one_line_before_crawling(
    serve: ServeFn, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(shop_app(3))
    assert main(["crawl", site.url, "-o", "out.jsonl", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err
    assert site.traffic.paths == []


async def test_the_library_runs_rules_in_parser_processes(serve: ServeFn) -> None:
    site = serve(shop_app(40))
    extract = {name: RULES[name] for name in ("name", "tags", "ld_price", "count_x")}
    got: list[Page] = []
    crawler = AsyncCrawler(site.url, processes=2, extract=extract, on_page=got.append)
    async with crawler:
        await crawler.crawl()
    pages = product_pages(40)
    seen = 0
    for page in got:
        number = _number(page.url)
        if number is None:
            continue
        want = reference(pages[number])
        assert page.extracted == {
            "name": want["name"],
            "tags": want["tags"],
            "ld_price": want["ld_price"],
            "count_x": want["count_x"],
        }
        seen += 1
    assert seen == 40
    with pytest.raises(ConfigError, match="'bad'"):
        AsyncCrawler(site.url, extract={"bad": "css:a["})


def test_extract_page_data_with_rules() -> None:
    html = product_pages(2)[1]
    data = extract_page_data(html, "http://shop.test/p/1", extract={"ld": RULES["ld_price"]})
    want = Extraction.from_specs({"ld": RULES["ld_price"]}).run(
        LexborHTMLParser(html), html, "http://shop.test/p/1"
    )
    assert data["extracted"] == want.values == {"ld": reference(html)["ld_price"]}
    assert "extracted" not in extract_page_data(html, "http://shop.test/p/1")


def test_the_extract_command_prints_each_rules_value(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(shop_app(3))
    argv = ["extract", f"{site.url}/p/1", "-x", "name=css:h1.name", "-x", "tags=all:css:li"]
    assert main([*argv, "-x", "ld=" + RULES["ld_price"], "-x", "none=css:.nothing"]) == 0
    want = reference(product_pages(3)[1])
    tags = json.dumps(want["tags"], ensure_ascii=False, separators=(",", ":"))
    assert capsys.readouterr().out.splitlines() == [
        f"name: {want['name']}",
        f"tags: {tags}",
        f"ld: {want['ld_price']}",
        "none: null",
    ]
    assert main(["extract", f"{site.url}/p/1", "-x", "n=count:css:li", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"n": want["tag_count"]}
    # One page, robots.txt first, no sitemap, no link followed.
    assert site.traffic.paths == ["/robots.txt", "/p/1"] * 2


def test_the_extract_command_obeys_robots_and_needs_a_rule(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    app = shop_app(3)

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /p/\n")

    app.router.add_get("/robots.txt", robots)
    site = serve(app)
    assert main(["extract", f"{site.url}/p/1", "-x", "n=css:h1"]) == 1
    err = capsys.readouterr().err
    assert "blocked by robots.txt" in err and err.count("\n") == 1
    assert "/p/1" not in site.traffic.paths
    assert main(["extract", f"{site.url}/p/1"]) == 2
    assert "give at least one rule" in capsys.readouterr().err


def test_the_rules_go_to_redis_workers_with_the_crawls_config() -> None:
    from sitecrawl._config import CrawlConfig
    from sitecrawl.frontier import decode, encode

    rules = Extraction.from_specs(
        {"p": {"spec": "css:.price@data-price", "type": "float", "when": "/p/"}, "x": "xpath://h1"}
    ).rules
    config = CrawlConfig(base_url="http://shop.test/", extract=rules)
    stored = json.loads(json.dumps(encode(config)))  # as Redis keeps it
    assert decode(stored).extract == rules
