"""The issues table: every check documented once, planted on a real site and found there (and
never on its clean pages), exported in every format, and failing ``check`` when asked to."""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from audit_site import audit_app
from conftest import ServeFn
from seo_site import CLEAN, PLANTED, seo_app
from servers import ServerThread
from sitecrawl import Page
from sitecrawl._cli import main
from sitecrawl.audit import (
    CHECKS,
    SEVERITIES,
    IssueRow,
    check_names,
    code_problem,
    crawl_issues,
    failing,
    issue_counts,
)

DOCS = Path(__file__).parent.parent / "docs" / "checks.md"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


def documented() -> dict[str, str]:
    """docs/checks.md's table: check -> severity."""
    rows = re.findall(r"^\| `([a-z0-9_.]+)` \| (\w+) \|", DOCS.read_text(), re.MULTILINE)
    assert len(rows) == len(dict(rows)), "a check documented twice"
    return dict(rows)


def test_the_docs_table_is_the_code_s_check_list() -> None:
    assert documented() == {name: check.severity for name, check in CHECKS.items()}
    assert all(check.severity in SEVERITIES for check in CHECKS.values())


def test_the_fixture_site_plants_every_check() -> None:
    assert set(PLANTED) == set(CHECKS)


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def seo(serve: ServeFn) -> ServerThread:
    """The SEO site crawled into s.db."""
    site = serve(seo_app())
    argv = ["crawl", site.url, "--state", "s.db", "-q", "--retries", "0", "--structured-data"]
    argv.append("--near-duplicates")
    assert main(argv) == 0
    return site


def test_every_planted_problem_is_found_and_clean_pages_have_none(seo: ServerThread) -> None:
    outs = ["issues.jsonl", "issues.csv", "issues.parquet"]
    assert (
        main(["export", "s.db", "-t", "issues", "-q", *(a for o in outs for a in ("-o", o))]) == 0
    )
    rows = jsonl(Path("issues.jsonl"))
    found = {(row["check"], row["url"].removeprefix(seo.url)) for row in rows}
    assert {(check, path) for check, path in PLANTED.items()} <= found
    assert not [row for row in rows if row["url"].removeprefix(seo.url) in CLEAN]
    for row in rows:
        assert row["severity"] == CHECKS[row["check"]].severity
        assert isinstance(row["detail"], dict) and row["message"]
    # Details for code: the broken target's referrer, the conflicting URLs, the chain.
    by = {(row["check"], row["url"].removeprefix(seo.url)): row for row in rows}
    assert by[("link.broken", "/missing")]["detail"]["linked_from"] == [seo.url + "/"]
    assert by[("link.broken", "/missing")]["detail"]["status"] == 404
    assert by[("hreflang.conflict", "/hl/bad")]["detail"]["urls"] == [
        seo.url + "/hl/fr1",
        seo.url + "/hl/fr2",
    ]
    assert by[("hreflang.invalid_code", "/hl/bad")]["detail"]["hreflang"] == "en-UK"
    assert [hop[1] for hop in by[("redirect.chain", "/moved2")]["detail"]["hops"]] == [301, 301]
    # Worst first, in the check list's order.
    order = list(CHECKS)
    keys = [(SEVERITIES.index(r["severity"]), order.index(r["check"]), r["url"]) for r in rows]
    assert keys == sorted(keys)
    # CSV: the detail as JSON text (an empty one empty); the same rows.
    with open("issues.csv", encoding="utf-8", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [(r["url"], r["check"], json.loads(r["detail"] or "{}")) for r in table] == [
        (r["url"], r["check"], r["detail"]) for r in rows
    ]
    import pyarrow.parquet as pq

    assert pq.read_table("issues.parquet").column("check").to_pylist() == [r["check"] for r in rows]


def test_a_clean_site_has_no_errors(serve: ServeFn) -> None:
    site = serve(audit_app(None, clean=True))
    assert main(["crawl", site.url, "--state", "c.db", "-q"]) == 0
    assert main(["export", "c.db", "-t", "issues", "-o", "c.jsonl", "-q"]) == 0
    rows = jsonl(Path("c.jsonl"))
    assert {row["check"] for row in rows} == {
        "redirect.chain",  # /old -> /older -> /about
        "meta_description.missing",  # /about
    }


def test_check_fails_on_the_named_checks_and_severities(
    seo: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    url = seo.url
    argv = ["check", url, "-q", "--retries", "0"]
    capsys.readouterr()
    # Broken links fail as ever; --fail-on adds the hreflang family's findings.
    assert main([*argv, "--fail-on", "hreflang", "--junit", "j.xml"]) == 1
    out = capsys.readouterr().out
    assert f"ISSUE error hreflang.conflict {url}/hl/bad" in out
    assert "sitemap." not in out and "ISSUE notice hreflang.no_x_default" in out
    assert 'classname="hreflang.no_return"' in Path("j.xml").read_text()
    xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit-ant.xsd").validate("j.xml")
    assert main([*argv, "--fail-on-severity", "error"]) == 1
    out = capsys.readouterr().out
    assert "ISSUE error sitemap.blocked" in out and "ISSUE warning" not in out
    assert f"BROKEN {url}/missing" in out and "link.broken" not in out  # listed once


def test_check_passes_a_clean_site_at_severity_error(
    serve: ServeFn, capsys: pytest.CaptureFixture[str]
) -> None:
    site = serve(audit_app(None, clean=True))
    assert main(["check", site.url, "-q", "--fail-on-severity", "error"]) == 0
    assert main(["check", site.url, "-q", "--fail-on", "title.missing,h1"]) == 0
    assert main(["check", site.url, "-q", "--fail-on", "meta_description.missing"]) == 1
    assert "ISSUE warning meta_description.missing" in capsys.readouterr().out


def test_an_unknown_check_is_a_one_line_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "http://127.0.0.1:9/", "--fail-on", "title.missin"]) == 2
    err = capsys.readouterr().err
    assert "unknown check 'title.missin'" in err and "Traceback" not in err


def test_check_names_take_checks_and_families() -> None:
    assert check_names("title.missing, hreflang.conflict") == (
        "title.missing",
        "hreflang.conflict",
    )
    assert set(check_names("sitemap")) == {n for n in CHECKS if n.startswith("sitemap.")}
    for bad in ("", "title.", "sitemaps", "title.missing,nope"):
        with pytest.raises(ValueError):
            check_names(bad)


def test_failing_picks_named_checks_and_severities() -> None:
    rows = [
        IssueRow("u1", "title.missing", "error", "m"),
        IssueRow("u2", "h1.missing", "warning", "m"),
        IssueRow("u3", "h1.duplicate", "notice", "m"),
    ]
    assert failing(rows) == []
    assert [r.url for r in failing(rows, checks=["h1.duplicate"])] == ["u3"]
    assert [r.url for r in failing(rows, severity="error")] == ["u1"]
    assert [r.url for r in failing(rows, severity="warning")] == ["u1", "u2"]
    assert issue_counts(rows) == {"title.missing": 1, "h1.missing": 1, "h1.duplicate": 1}


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("en", True),
        ("en-GB", True),
        ("EN-gb", True),
        ("x-default", True),
        ("zh-Hant-TW", True),
        ("zh-Hans", True),
        ("en-UK", False),  # the United Kingdom is GB
        ("eng", False),  # ISO 639-2, not 639-1
        ("xx", False),
        ("en_US", False),
        ("", False),
        ("de-DE-x", False),
    ],
)
def test_hreflang_codes(value: str, valid: bool) -> None:
    assert (code_problem(value) is None) is valid


S = "https://ex.com"


def page(path: str, **fields: Any) -> Page:
    return Page(
        url=S + path,
        status=200,
        title=f"T{path}",
        h1=f"H{path}",
        meta_description=f"D{path}",
        **fields,
    )


def test_hreflang_pairs_right_and_wrong() -> None:
    """A right pair gives nothing; a page named by an alternate but not naming it back is
    the alternate's no_return; a case-only difference is one language, not a conflict."""
    pair = [("en", S + "/en"), ("de", S + "/de"), ("x-default", S + "/en")]
    right = [page("/en", hreflang=pair), page("/de", hreflang=pair)]
    assert crawl_issues(right, [], start_url=S + "/en") == []
    one_way = [
        page("/en", hreflang=[*pair, ("DE", S + "/de")]),
        page("/de", hreflang=[("de", S + "/de"), ("x-default", S + "/de")]),
    ]
    rows = crawl_issues(one_way, [], start_url=S + "/en")
    assert [(r.check, r.url, r.detail.get("href")) for r in rows] == [
        ("hreflang.no_return", S + "/en", S + "/de")
    ]


def test_the_report_s_issues_filter_by_check_and_severity(seo: ServerThread) -> None:
    from playwright.sync_api import expect

    from browser import launch_chromium, open_page
    from test_report import _assert_quiet, _open_report, _rows, _wait_shown

    assert main(["report", "s.db", "-o", "r.html", "-q"]) == 0
    assert main(["export", "s.db", "-t", "issues", "-o", "i.jsonl", "-q"]) == 0
    rows = jsonl(Path("i.jsonl"))
    counts = issue_counts(IssueRow(**row) for row in rows)
    report = Path("r.html").resolve()
    with launch_chromium() as browser, open_page(browser) as (page, events):
        _open_report(page, report)
        issues = page.locator("[data-table='issues']")
        assert issues.get_attribute("data-shown") == str(len(rows))
        check = issues.locator("select.facet[data-column='check']")
        severity = issues.locator("select.facet[data-column='severity']")
        # Every value with its count, in the table's order (worst first).
        assert severity.locator("option").all_text_contents() == [
            "Every severity",
            *(f"{s} ({sum(r['severity'] == s for r in rows)})" for s in SEVERITIES),
        ]
        assert check.locator("option").count() == 1 + len(CHECKS)
        check.select_option("title.duplicate")
        _wait_shown(page, "issues", "2")
        expect(issues.locator("tbody td:nth-child(1)")).to_have_text(["title.duplicate"] * 2)
        severity.select_option("error")
        _wait_shown(page, "issues", "0")
        check.select_option("")
        _wait_shown(page, "issues", str(sum(r["severity"] == "error" for r in rows)))
        issues.locator("input.filter").fill("/hl/bad")
        hreflang_errors = [
            r for r in rows if r["severity"] == "error" and "/hl/bad" in json.dumps(r)
        ]
        _wait_shown(page, "issues", str(len(hreflang_errors)))
        # The count per check, in the check list's order.
        assert _rows(page, "issuecounts") == len(counts) == len(CHECKS)
        first = page.locator("[data-table='issuecounts'] tbody tr").first.locator("td")
        assert first.all_text_contents()[:3] == ["link.broken", "error", str(counts["link.broken"])]
        _assert_quiet(events, report.as_uri())


def test_an_alternate_reached_through_a_redirect() -> None:
    """An alternate crawled only as where another URL's redirect ended answers 200 there;
    an alternate whose own URL redirects is not 200."""
    pair = [("en", S + "/en"), ("de", S + "/de"), ("x-default", S + "/en")]
    old = page(
        "/old-de",
        final_url=S + "/de",
        redirects=[(S + "/old-de", 301)],
        hreflang=pair,
    )
    rows = crawl_issues([page("/en", hreflang=pair), old], [], start_url=S + "/en")
    assert [(r.check, r.url) for r in rows] == [("link.redirect", S + "/old-de")]
    wrong = [("en", S + "/en"), ("de", S + "/old-de"), ("x-default", S + "/en")]
    rows = crawl_issues([page("/en", hreflang=wrong), old], [], start_url=S + "/en")
    assert [(r.check, r.url, r.detail.get("status")) for r in rows if r.url == S + "/en"] == [
        ("hreflang.target_not_200", S + "/en", 301)
    ]


def test_other_analyses_add_their_findings_as_rows() -> None:
    pages = [page("/a")]
    extra = [("page.slow", S + "/a", "slow, said elsewhere", {"ms": 5000})]
    rows = crawl_issues(pages, [], start_url=S + "/a", extra=extra)
    assert rows == [
        IssueRow(S + "/a", "page.slow", "warning", "slow, said elsewhere", {"ms": 5000})
    ]
    with pytest.raises(ValueError, match=r"unknown check 'page\.sluggish'"):
        crawl_issues(pages, [], extra=[("page.sluggish", S + "/a", "m", {})])
