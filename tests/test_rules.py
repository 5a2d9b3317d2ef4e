"""The crawl's aim (scope kinds, include/exclude, strip-params, rewrites) on data: pure."""

from __future__ import annotations

import pytest

from sitecrawl._exceptions import ConfigError
from sitecrawl.control._rules import (
    NOT_INCLUDED,
    OUT_OF_SCOPE,
    CrawlScope,
    LinkRules,
    Rules,
    default_scope,
    parse_strip_params,
    registrable_domain,
)


def rules(start: str | list[str], **options: object) -> LinkRules:
    starts = [start] if isinstance(start, str) else start
    aim = Rules(**options)  # type: ignore[arg-type]
    return LinkRules(CrawlScope(starts, aim.scope or default_scope(starts[0])), aim)


@pytest.mark.parametrize(
    ("start", "kind"),
    [
        ("http://a.test/", "site"),
        ("http://a.test", "site"),
        ("http://a.test/book/", "prefix"),
        ("http://a.test/book/index.html", "site"),
        ("http://a.test/book", "site"),
        ("http://a.test/book/?x=1", "prefix"),
    ],
)
def test_default_scope(start: str, kind: str) -> None:
    assert default_scope(start) == kind


@pytest.mark.parametrize(
    ("kind", "url", "inside"),
    [
        ("site", "http://a.test/x", True),
        ("site", "https://www.a.test/x", True),
        ("site", "http://b.a.test/x", False),
        ("site", "http://a.test:8080/x", False),
        ("subdomains", "http://b.a.test/x", True),
        ("subdomains", "http://www.b.a.test/x", True),
        ("subdomains", "http://ba.test/x", False),
        ("subdomains", "http://b.a.test:81/x", False),
        ("domain", "http://shop.a.test/x", True),
        ("prefix", "http://a.test/book/ch1.html", True),
        ("prefix", "http://www.a.test/book/", True),
        ("prefix", "http://a.test/book", False),
        ("prefix", "http://a.test/bookish/", False),
        ("prefix", "http://a.test/other/", False),
    ],
)
def test_scope_kinds(kind: str, url: str, inside: bool) -> None:
    start = "http://a.test/book/" if kind == "prefix" else "http://a.test/"
    assert CrawlScope([start], kind).contains(url) is inside  # type: ignore[arg-type]


def test_domain_scope_uses_the_public_suffix_list() -> None:
    scope = CrawlScope(["https://www.example.co.uk/"], "domain")
    assert scope.contains("https://shop.example.co.uk/a")
    assert not scope.contains("https://other.co.uk/a")  # co.uk is a public suffix
    github = CrawlScope(["https://me.github.io/"], "domain")
    assert not github.contains("https://you.github.io/")  # github.io is a (private) suffix
    assert registrable_domain("127.0.0.1") == "127.0.0.1"
    assert registrable_domain("localhost") == "localhost"
    assert registrable_domain("[::1]") == "[::1]"


def test_several_starts_are_a_union() -> None:
    scope = CrawlScope(["http://a.test/book/", "http://b.test/docs/"], "prefix")
    assert scope.contains("http://a.test/book/x")
    assert scope.contains("http://b.test/docs/y")
    assert not scope.contains("http://a.test/docs/y")
    assert scope.describe() == "prefix a.test/book/, b.test/docs/"


def test_include_and_exclude() -> None:
    aim = rules("http://a.test/", include=(r"/products/", r"/list"), exclude=(r"[?&]sort=",))
    assert aim.decide("http://a.test/products/1") == (True, "in scope")
    assert aim.decide("http://a.test/about") == (False, NOT_INCLUDED)
    assert aim.decide("http://a.test/list?sort=price") == (False, "--exclude [?&]sort=")
    assert aim.decide("http://elsewhere.test/products/1") == (False, OUT_OF_SCOPE)
    for url in ["http://a.test/about", "http://a.test/list?sort=1", "http://x.test/"]:
        aim.allows(url)
    assert aim.refused == {NOT_INCLUDED: 1, "--exclude [?&]sort=": 1}


def test_strip_params_globs() -> None:
    aim = rules("http://a.test/", strip_params=parse_strip_params("utm_*, fbclid,gclid"))
    assert aim.rewrite("http://a.test/p?utm_source=x&id=3&fbclid=y") == "http://a.test/p?id=3"
    assert aim.rewrite("http://a.test/p?utm_source=x&utm_medium=y") == "http://a.test/p"
    assert aim.rewrite("http://a.test/p?UTM_source=x") == "http://a.test/p?UTM_source=x"
    assert aim.rewrite("http://a.test/p") == "http://a.test/p"
    everything = rules("http://a.test/", strip_params=("*",))
    assert everything.rewrite("http://a.test/p?a=1&b=2") == "http://a.test/p"


def test_rewrites_apply_in_order_and_reparse() -> None:
    aim = rules(
        "http://a.test/",
        rewrite=((r"^http://staging\.a\.test", "http://a.test"), (r"/index\.html$", "/")),
    )
    assert aim.rewrite("http://staging.a.test/x/index.html") == "http://a.test/x/"
    assert aim.rewrite("http://a.test/A/../b") == "http://a.test/b"
    broken = rules("http://a.test/", rewrite=((r"^http", "mailto"),))
    assert broken.verdict("http://a.test/x").url is None
    assert broken.verdict("http://a.test/x").follow is False


def test_verdict_rewrites_before_deciding() -> None:
    aim = rules("http://a.test/", strip_params=("utm_*",), exclude=(r"utm_",))
    verdict = aim.verdict("http://a.test/p?utm_source=x")
    assert verdict.url == "http://a.test/p"
    assert verdict.follow  # the exclude sees the rewritten URL


@pytest.mark.parametrize(
    "options",
    [
        {"include": ("(",)},
        {"exclude": ("[a-",)},
        {"rewrite": (("(", "x"),)},
        {"rewrite": (("a", r"\2"),)},
        {"scope": "planet"},
        {"strip_params": ("a=b",)},
    ],
)
def test_bad_rules_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        Rules(**options)  # type: ignore[arg-type]
