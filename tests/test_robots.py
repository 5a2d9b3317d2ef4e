"""robots.txt rules: Google's conformance cases (all of them), our own RFC 9309 cases, the
fetch outcome semantics, and page-level directives. Pure: no server."""

from __future__ import annotations

import json
import os

import ada_url
import pytest

from sitecrawl.fetch._robots import (
    MAX_LINE_BYTES,
    RobotsRules,
    escape_pattern,
    origin,
    page_directives,
    path_params_query,
    product_token,
)

# 145 cases ported from google/robotstxt robots_test.cc (a copy of the shared conformance
# file, so that CI's clean clone has it: tests/data/README.md says where it comes from).
DATA = os.path.join(os.path.dirname(__file__), "data", "robots_cases.json")
with open(DATA, encoding="utf-8") as fh:
    CASES: list[dict[str, object]] = json.load(fh)


def test_all_the_google_cases_are_there() -> None:
    assert len(CASES) == 145
    assert len({case["name"] for case in CASES}) == 145


@pytest.mark.parametrize("case", CASES, ids=[str(case["name"]) for case in CASES])
def test_google_case(case: dict[str, object]) -> None:
    """May ``user_agent`` fetch ``url`` under ``robots_txt``, as Google's matcher answers.
    (The user agent is given as it is: ``Foo Bar`` must not match a ``Foo`` group.)"""
    rules = RobotsRules.parse(str(case["robots_txt"]), str(case["user_agent"]))
    assert rules.allowed(str(case["url"])) is case["allowed"]


# Our own RFC 9309 cases: (robots.txt, url path, allowed for product token "sitecrawl").
GROUPS = """\
User-agent: *
Disallow: /

User-agent: SiteCrawl
User-agent: otherbot
Disallow: /private
Allow: /private/public
Disallow: /*.pdf$
Allow: /a/
Disallow: /a
Disallow: /shop/*/cart
Disallow: /caf%C3%A9
Disallow: /tilde/%7Euser
"""

RFC_CASES = [
    # 2.2.1: group chosen by product token, case-insensitively; several user-agent lines
    # share one group; the "*" group only applies when no other matches
    (GROUPS, "/", True),
    ("User-agent: *\nDisallow: /\n", "/", False),
    ("User-agent: other\nDisallow: /\n", "/x", True),
    # 2.2.2: the longest match wins; Allow wins a tie
    (GROUPS, "/private", False),
    (GROUPS, "/private/x", False),
    (GROUPS, "/private/public", True),
    (GROUPS, "/private/public/deeper", True),
    (GROUPS, "/a/", True),
    (GROUPS, "/a", False),
    ("User-agent: sitecrawl\nDisallow: /same\nAllow: /same\n", "/same", True),
    # 2.2.3: "*" any sequence, "$" end of path
    (GROUPS, "/doc.pdf", False),
    (GROUPS, "/doc.pdf?x=1", True),
    (GROUPS, "/doc.pdfx", True),
    (GROUPS, "/shop/42/cart", False),
    (GROUPS, "/shop/cart", True),
    # 2.2.2: percent-encoding equivalence (URLs reach us WHATWG-encoded, like ada's href)
    (GROUPS, "/café", False),
    (GROUPS, "/caf%C3%A9", False),
    (GROUPS, "/tilde/%7Euser", False),
    # ... but an escape is never decoded (Google's ID_Encoding#6): "%7E" in a rule does not
    # match "~" in a URL, which is how ada-url writes it
    (GROUPS, "/tilde/~user", True),
    # empty Disallow allows; group members are merged when a user agent repeats
    ("User-agent: sitecrawl\nDisallow:\n", "/anything", True),
    (
        "User-agent: sitecrawl\nDisallow: /a\n\nUser-agent: x\nDisallow: /\n\n"
        "User-agent: sitecrawl\nDisallow: /b\n",
        "/b",
        False,
    ),
    # unknown lines do not end a group (RFC 9309 2.2: "other records")
    ("User-agent: sitecrawl\nFoo: bar\nUser-agent: *\nDisallow: /\n", "/x", False),
]


@pytest.mark.parametrize(("robots", "path", "allowed"), RFC_CASES)
def test_rfc9309_cases(robots: str, path: str, allowed: bool) -> None:
    rules = RobotsRules.parse(robots, product_token("sitecrawl/0.1 (+https://x.test)"))
    url = ada_url.URL("https://example.test" + path).href
    assert rules.allowed(url) is allowed


def test_product_token() -> None:
    assert product_token("sitecrawl/0.1.0") == "sitecrawl"
    assert product_token("SiteCrawl-Beta/2 (+https://x)") == "sitecrawl-beta"
    assert product_token("  Foo_Bot  ") == "foo_bot"


def test_escape_pattern() -> None:
    assert escape_pattern("/a/b?c=d*$") == "/a/b?c=d*$"
    assert escape_pattern("/caf\u00e9/%aa/%2f/%zz") == "/caf%C3%A9/%AA/%2F/%zz"
    assert escape_pattern("/\u30c4") == "/%E3%83%84"


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://x.test", "/"),
        ("https://x.test/", "/"),
        ("https://x.test/a/b?q=1#frag", "/a/b?q=1"),
        ("https://x.test?q", "/?q"),
        ("https://x.test;p", "/;p"),
        ("https://x.test#f/g", "/"),
        ("//x.test/a", "/a"),
        ("/a/b", "/a/b"),
        ("a/b://c", "/b://c"),
    ],
)
def test_path_params_query(url: str, path: str) -> None:
    assert path_params_query(url) == path


def test_lines_are_cut_as_googles_are() -> None:
    # A line keeps its first MAX_LINE_BYTES bytes, counted in UTF-8 ("é" is two).
    line = "Disallow: /\u00e9" + "a" * MAX_LINE_BYTES
    rules = RobotsRules.parse(f"User-agent: *\n{line}\n", "sitecrawl")
    kept = MAX_LINE_BYTES - len("Disallow: /\u00e9".encode())
    prefix = "https://x.test/%C3%A9" + "a" * kept
    assert not rules.allowed(prefix)
    assert rules.allowed(prefix[:-1])


def test_groups_crawl_delay_and_agents() -> None:
    text = (
        "User-agent: *\nCrawl-delay: 9\nDisallow: /all\n\n"
        "User-agent: SiteCrawler\nDisallow: /\n\n"  # not ours: product tokens are whole
        "User-agent: sitecrawl/2.0\nUser-agent: other\nCrawl-delay: 1.5\nDisallow: /own\n"
    )
    rules = RobotsRules.parse(text, "sitecrawl")
    assert rules.crawl_delay == 1.5
    assert rules.allowed("https://x.test/all")
    assert not rules.allowed("https://x.test/own")
    other = RobotsRules.parse(text, "nobody")
    assert other.crawl_delay == 9
    assert not other.allowed("https://x.test/all")


def test_crawl_delay_and_sitemaps() -> None:
    rules = RobotsRules.parse(
        "User-agent: sitecrawl\nCrawl-delay: 2.5\nSitemap: https://x.test/s.xml\n", "sitecrawl"
    )
    assert rules.crawl_delay == 2.5
    assert rules.sitemaps == ("https://x.test/s.xml",)
    assert RobotsRules.parse("User-agent: *\nCrawl-delay: -4\n", "sitecrawl").crawl_delay is None


@pytest.mark.parametrize(
    ("status", "allowed", "reason"),
    [
        (200, False, None),  # parsed: "Disallow: /"
        (404, True, None),  # 4xx: unavailable, allow all
        (401, True, None),
        (403, True, None),
        (410, True, None),
        (429, False, "robots.txt unreachable (HTTP 429)"),  # come back later
        (500, False, "robots.txt unreachable (HTTP 500)"),  # 5xx: disallow for now
        (503, False, "robots.txt unreachable (HTTP 503)"),
        (301, True, None),  # a redirect left over: more than five hops, unavailable
        (None, False, "robots.txt unreachable (timeout)"),
    ],
)
def test_fetch_outcome_semantics(status: int | None, allowed: bool, reason: str | None) -> None:
    rules = RobotsRules.from_fetch(
        "sitecrawl", status, b"User-agent: *\nDisallow: /\n", error="timeout", retry_after=5
    )
    assert rules.allowed("https://x.test/page") is allowed
    assert rules.reason == reason
    assert (rules.expires is not None) is (reason is not None)
    if rules.expires is not None:
        assert not rules.expired(rules.expires - 1)
        assert rules.expired(rules.expires)


def test_body_is_utf8_with_bom_and_capped() -> None:
    body = b"\xef\xbb\xbfUser-agent: *\nDisallow: /x\n"
    assert not RobotsRules.from_fetch("sitecrawl", 200, body).allowed("https://x.test/x")
    huge = b"User-agent: *\n" + b"#" * (600 * 1024) + b"\nDisallow: /\n"
    # past 512 KiB the rest is not read: the Disallow is never seen
    assert RobotsRules.from_fetch("sitecrawl", 200, huge).allowed("https://x.test/x")


def test_origin() -> None:
    assert origin("http://127.0.0.1:8080/a/b?c") == "http://127.0.0.1:8080"
    assert origin("https://x.test") == "https://x.test"


@pytest.mark.parametrize(
    ("meta", "header", "noindex", "nofollow"),
    [
        (None, None, False, False),
        ("noindex", None, True, False),
        ("NoIndex, NoFollow", None, True, True),
        ("none", None, True, True),
        ("all", None, False, False),
        (None, "nofollow", False, True),
        (None, "otherbot: noindex", False, False),
        (None, "sitecrawl: noindex, otherbot: nofollow", True, False),
        (None, "unavailable_after: 25 Jun 2010 15:00:00 PST", False, False),
        ("index", "noindex", True, False),
        (None, "otherbot: noindex, nofollow", False, False),
        (None, "otherbot: noindex\nnofollow", False, True),
    ],
)
def test_page_directives(
    meta: str | None, header: str | None, noindex: bool, nofollow: bool
) -> None:
    directives = page_directives(meta, header, "sitecrawl")
    assert (directives.noindex, directives.nofollow) == (noindex, nofollow)


def _regex_matcher(body: str, anchored: bool) -> object:
    """The matcher as a backtracking regex (what it was): the reference for small cases."""
    import re

    regex = ".*".join(map(re.escape, body.split("*"))) + ("\\Z" if anchored else "")
    return re.compile(regex, re.DOTALL).match


def test_the_wildcard_matcher_answers_as_the_regex_does() -> None:
    """Every pattern of up to three pieces over ``a``, ``b``, ``/`` and ``*``, with and
    without ``$``, on every path of up to five such characters."""
    import itertools

    from sitecrawl.fetch._robots import wildcard_matcher

    alphabet = "ab/"
    paths = ["".join(p) for n in range(6) for p in itertools.product(alphabet, repeat=n)]
    bodies = {"".join(p) for n in range(1, 5) for p in itertools.product(alphabet + "*", repeat=n)}
    for body in sorted(bodies):
        for anchored in (False, True):
            ours, reference = wildcard_matcher(body, anchored), _regex_matcher(body, anchored)
            for path in paths:
                assert ours(path) is (reference(path) is not None), (body, anchored, path)


_HOSTILE = """
from sitecrawl.fetch import RobotsRules

rules = RobotsRules.parse("User-agent: *\\nDisallow: /*a*a*a*a*a*a*a*a*b$\\n", "sitecrawl")
print(rules.allowed("https://x.test/" + "a" * 2000), rules.allowed("https://x.test/a" + "ab" * 9))
"""


def test_a_hostile_wildcard_pattern_cannot_hold_the_crawler() -> None:
    """``Disallow: /*a*a*a*a*a*a*a*a*b$`` on a long path: the regex it became backtracked
    for hours, on the event loop (signals unanswered). In a subprocess, so that the old
    matcher fails this test instead of hanging the test run."""
    import subprocess
    import sys

    from servers import checkout_env

    done = subprocess.run(
        [sys.executable, "-c", _HOSTILE],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == "True False\n", done.stderr
