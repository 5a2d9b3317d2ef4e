"""``sitecrawl check``: exact broken-link sets, referrers, anchor texts, exit codes, JUnit XML.

The site is real (tests/audit_site.py) and so are its "external" hosts: other loopback servers,
one healthy, one answering 404/500, and a port where nothing listens.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import xmlschema
from aiohttp import web

from audit_site import AuditSites, Externals, audit_app, broken_app, healthy_app, unused_port
from conftest import ServeFn
from servers import html
from sitecrawl import Page
from sitecrawl._cli import main
from sitecrawl._cli._check import link_targets
from sitecrawl._models import Link
from sitecrawl._urls import parse_base_url
from sitecrawl.audit import check_outcome
from sitecrawl.audit._targets import SHOWN
from sitecrawl.control import CrawlScope

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit-ant.xsd")
# --retries 1: retried failures are seen, and each retry waits a fraction of a second only.
FAST = ["--retries", "1", "-q"]


@pytest.fixture
def sites(serve: ServeFn) -> AuditSites:
    healthy, broken = serve(healthy_app()), serve(broken_app())
    ext = Externals(healthy.url, broken.url, f"http://127.0.0.1:{unused_port()}")
    return AuditSites(serve(audit_app(ext)), healthy, broken, ext)


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield
    assert not list(tmp_path.glob("*.sitecrawl.db"))  # check leaves no state file behind


def blocks(out: str) -> dict[str, list[str]]:
    """The report's entries: first line -> its "from ..." lines."""
    found: dict[str, list[str]] = {}
    current: list[str] = []
    for line in out.splitlines():
        if line.startswith("    from "):
            current.append(line.strip())
        elif line.startswith(("BROKEN ", "warning: redirect ", "REDIRECT ")):
            current = found.setdefault(line, [])
    return found


def test_check_reports_each_broken_target_with_referrers_and_exits_1(
    sites: AuditSites, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sites.site.url
    assert main(["check", s, *FAST]) == 1
    out = capsys.readouterr().out
    assert blocks(out) == {
        f"BROKEN {s}/missing  HTTP 404  (internal)  <- 2 pages": [
            f'from {s}/ "Missing page" [a]',
            f'from {s}/about "gone again" [a]',
        ],
        f"BROKEN {s}/boom  HTTP 500  (internal)  <- 1 page": [f'from {s}/about "Crash" [a]'],
        f"BROKEN {s}/img/missing.png  HTTP 404  (internal)  <- 1 page": [f"from {s}/ [img]"],
        f"BROKEN {s}/private/secret  blocked by robots.txt  (internal)  <- 1 page": [
            f'from {s}/ "Secret" [a]'
        ],
        f"warning: redirect {s}/old  {s}/old (301) -> {s}/older (302) -> {s}/about (200)"
        "  <- 1 page": [f'from {s}/ "Old page" [a]'],
    }
    assert out.endswith(
        "10 link targets checked: 4 broken, 1 redirected;"
        " 7 not checked: 7 external (no --external)\n"
    )
    # Nothing external was asked; the robots-blocked page was not fetched; the site's
    # resources were, once each (HEAD), and the 500 page was retried once.
    assert sites.healthy.traffic.paths == sites.broken.traffic.paths == []
    paths = sites.site.traffic.paths
    assert "/private/secret" not in paths
    assert sorted(p for p in paths if p.startswith(("/img/", "/style"))) == [
        "/img/logo.png",
        "/img/missing.png",
        "/style.css",
    ]
    assert paths.count("/boom") == 2


def test_external_checks_each_url_once_head_then_get_politely_with_retries(
    sites: AuditSites, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    s, ext = sites.site.url, sites.ext
    assert main(["check", s, "--external", "--junit", "report.xml", *FAST]) == 1
    out = capsys.readouterr().out
    found = blocks(out)
    external = {
        line: refs
        for line, refs in found.items()
        if not line.split("  ")[0].split()[-1].startswith(s + "/")
    }
    refused = f"BROKEN {ext.refused}/x  connection refused (127.0.0.1:"
    assert {line.split("  ")[0] for line in external} == {
        f"BROKEN {ext.broken}/gone",
        f"BROKEN {ext.broken}/error",
        f"BROKEN {ext.refused}/x",
        f"warning: redirect {ext.healthy}/moved",
    }
    assert [refs for line, refs in external.items() if line.startswith(refused)] == [
        [f'from {s}/ "Dead host" [a]']
    ]
    assert external[f"BROKEN {ext.broken}/gone  HTTP 404  (external)  <- 1 page"] == [
        f'from {s}/ "Gone elsewhere" [a]'
    ]
    assert external[f"BROKEN {ext.broken}/error  HTTP 500  (external)  <- 1 page"] == [
        f'from {s}/ "Erroring" [a]'
    ]
    h = ext.healthy
    moved = f"warning: redirect {h}/moved  {h}/moved (301) -> {h}/ok (200)  <- 1 page"
    assert external[moved] == [f'from {s}/ "Moved away" [a]']
    assert "17 link targets checked: 7 broken, 2 redirected\n" in out
    # HEAD first; GET only where HEAD was refused (405); the 503 was retried and then passed;
    # the 500 retried once; nothing asked twice otherwise.
    healthy = sorted(sites.healthy.traffic.paths)
    assert healthy == sorted(
        ["/ok", "/ok", "/moved", "/head-refused", "/head-refused", "/flaky", "/flaky"]
    )
    assert sorted(sites.broken.traffic.paths) == ["/error", "/error", "/gone"]

    # JUnit: valid against the schema; a test case per checked target, failures for the broken.
    xml = tmp_path / "report.xml"
    SCHEMA.validate(str(xml))
    suite = ET.parse(xml).getroot()
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert suite.get("tests") == str(len(cases)) == "17"
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    assert failed == {
        f"{s}/missing",
        f"{s}/boom",
        f"{s}/img/missing.png",
        f"{s}/private/secret",
        f"{ext.broken}/gone",
        f"{ext.broken}/error",
        f"{ext.refused}/x",
    }
    assert suite.get("failures") == "7"
    failure = cases[f"{s}/missing"].find("failure")
    assert failure is not None and failure.get("message") == "HTTP 404"
    assert failure.text == (
        "linked from 2 pages (2 links)\n"
        f'from {s}/ "Missing page" [a]\nfrom {s}/about "gone again" [a]'
    )
    assert cases[f"{ext.healthy}/ok"].get("classname") == "external"
    assert cases[f"{s}/about"].get("classname") == "internal"
    system_out = suite.find("system-out")
    assert system_out is not None and f"{ext.healthy}/moved" in (system_out.text or "")


def test_clean_site_exits_0_and_fail_on_redirect_makes_redirects_failures(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    site = serve(audit_app(None, clean=True))
    assert main(["check", site.url, *FAST]) == 0
    out = capsys.readouterr().out
    assert "3 link targets checked: 0 broken, 1 redirected\n" in out
    assert f"warning: redirect {site.url}/old " in out
    assert main(["check", site.url, "--fail-on-redirect", "--junit", "r.xml", *FAST]) == 1
    out = capsys.readouterr().out
    assert f"REDIRECT {site.url}/old " in out
    SCHEMA.validate(str(tmp_path / "r.xml"))
    suite = ET.parse(tmp_path / "r.xml").getroot()
    failures = [
        case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None
    ]
    assert failures == [f"{site.url}/old"] and suite.get("failures") == "1"


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert main(["check", "ftp://x.test/"]) == 2
    assert main(["check", "http://x.test/", "--fresh"]) == 2
    assert main(["check", "http://x.test/", "--junit", "/no/such/dir/r.xml"]) == 2
    assert "--fresh needs --state" in capsys.readouterr().err


def many_referrers_app(pages: int) -> web.Application:
    """``pages`` pages, each linking to the next and twice (two anchor texts) to /gone, and
    once to a stylesheet that is not there."""

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info.get("n", "0"))
        nxt = f'<a href="/p/{n + 1}">next</a>' if n + 1 < pages else ""
        links = f'<a href="/gone">Gone</a> <a href="/gone">gone again</a> {nxt}'
        return html(links, head='<link rel="stylesheet" href="/missing.css">')

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/p/{n}", page)
    return app


def test_one_broken_target_is_one_entry_counted_in_distinct_pages(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(many_referrers_app(12))
    s = site.url
    assert main(["check", s, *FAST]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == f"BROKEN {s}/gone  HTTP 404  (internal)  <- 12 pages (24 links)"
    # The first few distinct pages (each once, with its first link's text), then how many more
    # and where every link is listed.
    assert lines[1:7] == [
        f'    from {s}/ "Gone" [a]',
        *(f'    from {s}/p/{n} "Gone" [a]' for n in range(1, 5)),
        "    and 7 more: check with --state FILE, then sitecrawl export FILE -t links -o links.csv",
    ]
    assert lines[7] == f"BROKEN {s}/missing.css  HTTP 404  (internal)  <- 12 pages"
    assert len(lines) == 15  # two entries of 7 lines, the summary
    assert lines[-1].startswith("13 link targets checked: 2 broken")


def test_more_referrers_name_the_export_of_the_state_file(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    site = serve(many_referrers_app(7))
    assert main(["check", site.url, "--state", "c.db", *FAST]) == 1
    out = capsys.readouterr().out
    assert "    and 2 more: sitecrawl export c.db -t links -o links.csv\n" in out
    (tmp_path / "c.db").unlink()


def test_grouping_the_results_shows_progress(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(many_referrers_app(3))
    assert main(["check", site.url, "--retries", "1"]) == 1
    err = capsys.readouterr().err
    assert "grouping the links of 4 pages by target\n" in err
    assert re.search(r"\ngrouped in \d+\.\d s\n", err)


def test_progress_callback_and_distinct_pages_in_check_outcome() -> None:
    """The pure core: ``progress`` is told the pages done; a page linking to a broken target
    three times counts once, by three links."""
    base = "http://site.test"
    pages = [
        Page(
            f"{base}/{n}",
            status=200,
            links=[(f"{base}/gone", "a", None, "a")] * 3 + [(f"{base}/{n + 1}", "n", None, "a")],
        )
        for n in range(1200)
    ]
    pages.append(Page(f"{base}/gone", status=404, error="HTTP 404", error_kind="http_status"))
    calls: list[tuple[int, int]] = []
    outcome = check_outcome(pages, base + "/0", {}, progress=lambda *a: calls.append(a))
    assert calls == [(500, 1201), (1000, 1201), (1201, 1201)]
    (broken,) = outcome.broken
    assert (broken.pages, broken.links, len(broken.referrers)) == (1200, 3600, SHOWN)


def test_link_targets_are_checked_once_per_page_key() -> None:
    """Two spellings of one URL (the scheme, a trailing slash) are one target, as the
    summary counts it: the progress line's total agrees with it."""
    base = "http://site.test"
    links: list[Link] = [
        ("http://e.test/x", "a", None, "a"),
        ("https://e.test/x", "b", None, "a"),
        ("http://e.test/x/", "c", None, "a"),
        ("http://e.test/y", "d", None, "a"),
    ]
    pages = [Page(base + "/", status=200, links=links)]
    scope = CrawlScope([parse_base_url(base + "/")], "site")
    assert link_targets(pages, scope, external=True) == ["http://e.test/x", "http://e.test/y"]
    # A URL that redirected to a page crawled at its own URL: its links are that page's,
    # which the summary counts, not again (a link only there would be checked, not counted).
    again = Page(
        base + "/start",
        final_url=base + "/",
        redirects=[(base + "/start", 301)],
        links=[*links, ("http://e.test/z", "z", None, "a")],
    )
    assert link_targets([*pages, again], scope, external=True) == [
        "http://e.test/x",
        "http://e.test/y",
    ]


def test_a_dead_site_prints_no_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", f"http://127.0.0.1:{unused_port()}/", "--retries", "0"]) == 1
    captured = capsys.readouterr()
    assert "link targets checked" not in captured.out + captured.err
    assert captured.out == ""
