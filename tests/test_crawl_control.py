"""Crawl control end to end (issue 15): scope kinds, include/exclude, strip-params and
rewrites applied to link following, sitemaps, resume and ``explain``, on loopback servers
whose logs are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import ServerThread, html
from shop_site import book_app, shop_app, shop_paths
from sitecrawl import AsyncCrawler, CrawlConfig, Rules
from sitecrawl._cli import main

SHOP_RULES = ["--strip-params", "utm_*", "--exclude", "[?&]sort="]


def fetched(server: ServerThread) -> list[str]:
    return server.traffic.pages


def urls_in(path: Path, server: ServerThread) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["url"].removeprefix(server.url) or "/" for line in lines]


def test_faceted_shop_yields_exactly_products_and_listings(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shop = serve(shop_app())
    out = tmp_path / "pages.jsonl"
    argv = ["crawl", shop.url, "--no-state", "-o", str(out), "-c", "8", *SHOP_RULES]
    assert main(argv) == 0
    pages = urls_in(out, shop)
    assert sorted(pages) == sorted(shop_paths())
    assert sorted(fetched(shop)) == sorted(shop_paths())  # each once, nothing excluded asked
    assert not any("sort=" in path or "utm_" in path for path in shop.traffic.paths)
    err = capsys.readouterr().err
    assert "scope: site 127.0.0.1:" in err
    # Distinct URLs (after stripping) refused by the rule: the sort variants of each listing.
    assert "not followed (distinct URLs): --exclude [?&]sort=: " in err
    # A refused link is still a link of its page.
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    product = next(r for r in records if r["url"].endswith("/product/1"))
    assert f"{shop.url}/list?page=1&sort=price" in product["outgoing_links"]


def test_without_rules_the_shop_crawl_fetches_the_facets(serve: ServeFn) -> None:
    """The control case: the same crawl without rules asks for sort and utm_ variants."""
    shop = serve(shop_app())
    assert main(["crawl", shop.url, "--no-state", "-q", "-n", "60"]) == 0
    assert any("sort=" in path or "utm_" in path for path in fetched(shop))


def test_prefix_crawl_from_a_folder_stays_in_it(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(book_app())
    assert main(["crawl", site.url + "/book/", "--no-state"]) == 0
    paths = fetched(site)
    assert sorted(paths) == sorted(["/book/"] + [f"/book/ch{n}.html" for n in range(1, 21)])
    assert "scope: prefix 127.0.0.1:" in capsys.readouterr().err
    site.traffic.paths.clear()
    assert main(["crawl", site.url + "/book/", "--no-state", "-q", "--scope", "site"]) == 0
    assert "/blog/1" in fetched(site)


def test_include_keeps_only_matching_links(serve: ServeFn) -> None:
    site = serve(book_app())
    argv = ["crawl", site.url, "--no-state", "-q", "--include", r"/ch1\d?\.html$"]
    assert main(argv) == 0
    expected = ["/", "/book/ch1.html"] + [f"/book/ch{n}.html" for n in range(10, 20)]
    assert sorted(fetched(site)) == sorted(expected)


def test_rewrite_maps_urls_before_dedupe(serve: ServeFn) -> None:
    site = serve(book_app())
    # Every chapter becomes chapter 1; the blog is out of a --scope prefix.
    argv = ["crawl", site.url + "/book/", "--no-state", "-q"]
    argv += ["--rewrite", r"/ch\d+\.html$", "/ch1.html"]
    assert main(argv) == 0
    assert sorted(fetched(site)) == ["/book/", "/book/ch1.html"]


def sitemap_app() -> web.Application:
    urls = "".join(
        f"<url><loc>/{name}</loc></url>"
        for name in ("a?utm_source=map", "a", "b?sort=1", "c", "outside/x")
    )

    async def sitemap(request: web.Request) -> web.Response:
        body = f'<?xml version="1.0"?><urlset>{urls}</urlset>'
        return web.Response(text=body, content_type="application/xml")

    async def page(request: web.Request) -> web.Response:
        return html("no links")

    app = web.Application()
    app.router.add_get("/sitemap.xml", sitemap)
    app.router.add_get("/{tail:.*}", page)
    return app


async def test_sitemap_urls_obey_the_rules(serve: ServeFn) -> None:
    site = serve(sitemap_app())
    rules = Rules(strip_params=("utm_*",), exclude=("sort=", "outside"))
    config = CrawlConfig(base_url=site.url, rules=rules)
    async with AsyncCrawler(site.url, config=config) as crawler:
        await crawler.crawl()
    assert sorted(fetched(site)) == ["/", "/a", "/c"]
    assert crawler.stats.refused == {"--exclude sort=": 1, "--exclude outside": 1}


@pytest.mark.parametrize(
    "flags",
    [["--include", "("], ["--exclude", "[a-"], ["--rewrite", "(", "x"], ["--scope", "moon"]],
)
def test_a_bad_rule_is_one_line_and_exit_2_before_crawling(
    flags: list[str], serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(book_app())
    assert main(["crawl", site.url, "--no-state", *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("sitecrawl: error: ")
    assert "unrecognized" not in err
    assert site.traffic.paths == []


def test_subdomains_flag_is_an_alias_of_scope_subdomains(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(book_app())
    assert main(["crawl", site.url, "--no-state", "-n", "1", "--subdomains"]) == 0
    assert "scope: subdomains *.127.0.0.1:" in capsys.readouterr().err


def test_resume_obeys_the_stored_rules_and_refuses_others(
    serve: ServeFn, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shop = serve(shop_app())
    state = str(tmp_path / "shop.db")
    assert main(["crawl", shop.url, "--state", state, "-q", "-n", "30", *SHOP_RULES]) == 0
    # Other rules: refused, one line, exit 2, nothing fetched.
    before = len(shop.traffic.paths)
    assert main(["crawl", shop.url, "--state", state, "--exclude", "nothing"]) == 2
    err = capsys.readouterr().err
    assert "this crawl began with --exclude '[?&]sort=' --strip-params 'utm_*'" in err
    assert err.count("\n") == 1
    assert len(shop.traffic.paths) == before
    # No rules given: the stored ones are taken (and said), and obeyed to the end.
    assert main(["crawl", shop.url, "--state", state]) == 0
    assert "resumed with the rules this crawl began with" in capsys.readouterr().err
    assert sorted(fetched(shop)) == sorted(shop_paths())


def test_explain_says_what_would_be_followed_and_why(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "http://shop.test/", *SHOP_RULES, "--include", "/(list|product)"]
    argv += ["/product/3?utm_source=x&id=1", "/list?page=2&sort=price", "/about"]
    argv += ["http://elsewhere.test/", "http://shop.test/"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines() == [
        "scope: site shop.test",
        "follow  http://shop.test/product/3?id=1  (in scope; rewritten from"
        " http://shop.test/product/3?utm_source=x&id=1)",
        "skip    http://shop.test/list?page=2&sort=price  (--exclude [?&]sort=)",
        "skip    http://shop.test/about  (no --include matched)",
        "skip    http://elsewhere.test/  (out of scope)",
        "follow  http://shop.test/  (the start URL: always fetched)",
    ]


def test_check_crawls_by_the_rules(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shop = serve(shop_app())
    assert main(["check", shop.url, "-q", *SHOP_RULES]) == 0
    assert sorted(fetched(shop)) == sorted(shop_paths())
    # With --state, the rules are stored with it as for a crawl.
    shop.traffic.paths.clear()
    state = str(tmp_path / "check.db")
    assert main(["check", shop.url, "-q", "--state", state, "-n", "5", *SHOP_RULES]) == 0
    assert main(["check", shop.url, "-q", "--state", state, "--exclude", "x"]) == 2
    assert "this crawl began with" in capsys.readouterr().err
