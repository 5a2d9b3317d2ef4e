from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from sitecrawl import InvalidURL, normalize_url
from sitecrawl._urls import (
    JoinCache,
    _join_plain,
    _join_plain_fast,
    base_directory,
    join,
    parse_base_url,
    url_key,
)
from sitecrawl.control import CrawlScope, LinkRules, Rules
from speedups import require_speedups

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://blog.boot.dev/path", "blog.boot.dev/path"),
        ("https://Blog.Boot.dev/path/", "blog.boot.dev/path"),
        ("http://blog.boot.dev/path", "blog.boot.dev/path"),
        ("https://blog.boot.dev/Path/Case", "blog.boot.dev/Path/Case"),
        ("http://x.com/a?b=1#c", "x.com/a?b=1"),
        ("http://x.com/a/?b=1", "x.com/a?b=1"),
        ("https://x.com/", "x.com"),
        ("https://x.com", "x.com"),
        ("https://x.com:443/a", "x.com/a"),
        ("http://x.com:80/a", "x.com/a"),
        ("http://x.com:8080/a", "x.com:8080/a"),
        ("https://user:pw@x.com/a", "x.com/a"),
        ("https://x.com/a/./b/../c", "x.com/a/c"),
        ("https://x.com/a b", "x.com/a%20b"),
        ("x.com/path/", "x.com/path"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    "url", ["", "   ", "ftp://x.com/a", "mailto:a@b.c", "http://", "http://[::"]
)
def test_normalize_url_rejects_non_web_urls(url: str) -> None:
    with pytest.raises(InvalidURL):
        normalize_url(url)


def test_schemes_and_fragments_map_to_one_key() -> None:
    keys = {normalize_url(u) for u in ["http://a.com/p", "https://A.com/p/", "https://a.com/p#x"]}
    assert keys == {"a.com/p"}


def _whatwg_cases() -> list[dict[str, str]]:
    cases = json.loads((DATA / "urltestdata.json").read_text(encoding="utf-8"))
    return [c for c in cases if isinstance(c, dict) and c.get("base")]


def test_join_follows_the_whatwg_url_standard() -> None:
    """Every WPT case with a base: joining gives the expected href (fragment dropped) or fails,
    and non-http(s) results are skipped."""
    cases = _whatwg_cases()
    assert len(cases) > 300
    mismatches = []
    for case in cases:
        got = join(case["base"], case["input"])
        if case.get("failure"):
            expected = None
        else:
            href = case["href"]
            expected = href.split("#", 1)[0] if href.startswith(("http://", "https://")) else None
        if got != expected:
            mismatches.append((case["input"], case["base"], got, expected))
    assert mismatches == []


def test_url_key_equals_normalize_url_on_canonical_hrefs() -> None:
    for case in _whatwg_cases():
        href = join(case["base"], case["input"])
        if href is not None and "@" not in href.split("/")[2]:
            assert url_key(href) == normalize_url(href)


def test_scope_same_site_with_or_without_www() -> None:
    scope = CrawlScope([parse_base_url("https://www.example.com/docs/")], "site")
    assert scope.contains("https://example.com/a")
    assert scope.contains("http://www.example.com/b")
    assert not scope.contains("https://blog.example.com/")
    assert not scope.contains("https://example.com.evil.org/")
    assert not scope.contains("https://notexample.com/")
    assert not scope.contains("https://example.com:8443/")


def test_scope_subdomains() -> None:
    scope = CrawlScope([parse_base_url("https://example.com")], "subdomains")
    assert scope.contains("https://blog.example.com/")
    assert scope.contains("https://a.b.example.com/")
    assert not scope.contains("https://badexample.com/")


def test_scope_port_is_part_of_the_site() -> None:
    scope = CrawlScope([parse_base_url("http://127.0.0.1:8001/")], "site")
    assert scope.contains("http://127.0.0.1:8001/x")
    assert not scope.contains("http://127.0.0.1:8002/x")


def test_join_cache_gives_the_same_answers_as_join() -> None:
    """The memo must be exact: resolve every WPT input against several bases sharing
    directories and origins, cached and uncached, in both orders."""
    hrefs = [c["input"] for c in _whatwg_cases()] + ["/a", "b", "../c", "//h/x", "?q", "#f", ""]
    bases = [
        "http://example.org/foo/bar",
        "http://example.org/foo/baz?x=1",
        "http://example.org/other/bar",
        "https://example.org/foo/bar",
        "http://example.org:8080/foo/bar",
        "http://other.org/foo/bar",
    ]
    cache = JoinCache()
    for base in bases + bases[::-1]:
        for href in hrefs:
            assert cache.join_each(base, [href]) == [join(base, href)], (base, href)


JoinPlain = Callable[[str, str, str], "str | None"]


def compiled_join_plain() -> JoinPlain:
    """The C twin of ``_join_plain`` (the test skips when it was not built)."""
    require_speedups()
    from sitecrawl._speedups import join_plain

    return join_plain


# The string path exists twice, in Python and in C (sitecrawl._speedups): every test of it
# runs on both.
@pytest.fixture(params=["python", "compiled"])
def join_plain(request: pytest.FixtureRequest) -> JoinPlain:
    return compiled_join_plain() if request.param == "compiled" else _join_plain


def _join_plain_against(base: str, raw: str, join_plain: JoinPlain = _join_plain) -> str | None:
    directory = base_directory(base)
    origin = directory[: directory.find("/", directory.index("://") + 3)]
    return join_plain(raw, directory, origin)


def test_join_each_takes_the_compiled_string_path() -> None:
    assert _join_plain_fast is compiled_join_plain()


BASE = "http://127.0.0.1:8088/s11/g6/page-2915.html"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("page-2.html", "http://127.0.0.1:8088/s11/g6/page-2.html"),
        ("a/b/c.html", "http://127.0.0.1:8088/s11/g6/a/b/c.html"),
        ("x/", "http://127.0.0.1:8088/s11/g6/x/"),
        ("a//b", "http://127.0.0.1:8088/s11/g6/a//b"),
        ("~u/!$&'()*+,;=@", "http://127.0.0.1:8088/s11/g6/~u/!$&'()*+,;=@"),
        ("/", "http://127.0.0.1:8088/"),
        ("/s1/g0/page-3.html", "http://127.0.0.1:8088/s1/g0/page-3.html"),
        ("http://127.0.0.1:8088/static/x.css", "http://127.0.0.1:8088/static/x.css"),
        ("http://127.0.0.1:8088/", "http://127.0.0.1:8088/"),
        ("../../static/css/site.css", "http://127.0.0.1:8088/static/css/site.css"),
        ("../../", "http://127.0.0.1:8088/"),
        ("../../../../x", "http://127.0.0.1:8088/x"),  # never above the root
        ("./x", "http://127.0.0.1:8088/s11/g6/x"),
        ("a/../b", "http://127.0.0.1:8088/s11/g6/b"),
        (".", "http://127.0.0.1:8088/s11/g6/"),
        ("..", "http://127.0.0.1:8088/s11/"),
        ("a/..", "http://127.0.0.1:8088/s11/g6/"),
        ("./", "http://127.0.0.1:8088/s11/g6/"),
        ("/a/./b/../../c/.", "http://127.0.0.1:8088/c/"),
        ("http://127.0.0.1:8088/a/../b", "http://127.0.0.1:8088/b"),
        (".well-known/x/...", "http://127.0.0.1:8088/s11/g6/.well-known/x/..."),
    ],
)
def test_join_plain_takes_the_common_references(
    raw: str, expected: str, join_plain: JoinPlain
) -> None:
    assert _join_plain_against(BASE, raw, join_plain) == expected
    assert join(BASE, raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "?q",
        "#top",
        "p?q",
        "p#f",
        "//127.0.0.1:8088/x",
        "//other.test/x",
        "a b",
        " a",
        "a\tb",
        "a\\b",
        "a%20b",
        "%2e%2e/x",
        "a^b",
        "é",
        "mailto:a@b.c",
        "p:q",
        "HTTP://127.0.0.1:8088/x",
        "https://127.0.0.1:8088/x",
        "http://127.0.0.1:80880/x",
        "http://127.0.0.1:8088.evil/x",
        "http://127.0.0.1:8088",
        "http://127.0.0.1:8088/x?q",
        "http://127.0.0.1:8088/a b",
    ],
)
def test_join_plain_leaves_everything_else_to_the_parser(raw: str, join_plain: JoinPlain) -> None:
    assert _join_plain_against(BASE, raw, join_plain) is None


_BASES = [
    "http://h.test/",
    "http://h.test/a",
    "http://h.test/a/b/c/d/e.html",
    "https://h.test:8443/a/b/",
    "https://h.test/a/b?q=/x/y/z",
    "http://h.test/a/b#frag/x",
    "http://h.test/a//b//",
    "http://h.test/.well-known/x/y",
    "http://h.test/a/%7Eu/%2e%2e;p/c",
    "http://u:p%40q@h.test:81/a/b",
    "http://:p@h.test/a/",
    "http://[::1]:8080/a/b",
    "https://xn--nxasmq6b.test/a/b/c",
    "http://127.0.0.1:8088/s11/g6/page-2915.html",
]
_SAFE = "abcXYZ019-._~!$&'()*+,;=@"
_UNSAFE = ["%", "%2e", "%2E", *'?#:\\ \t\n^`{|["é']


def _random_reference(rng: random.Random, origin: str) -> str:
    segments = []
    for _ in range(rng.randrange(1, 6)):
        kind = rng.random()
        if kind < 0.3:
            segments.append(rng.choice([".", "..", "", ".a", "..."]))
        else:
            segment = "".join(rng.choice(_SAFE) for _ in range(rng.randrange(1, 5)))
            if kind > 0.9:
                at = rng.randrange(len(segment) + 1)
                segment = segment[:at] + rng.choice(_UNSAFE) + segment[at:]
            segments.append(segment)
    path = "/".join(segments)
    prefix = rng.choice(
        ["", "", "", "/", "/", "//", origin + "/", origin, "http://h.test/", "https://h.test/"]
    )
    if rng.random() < 0.15:  # schemes: other ones resolve to nothing, whatever the base
        prefix = rng.choice(["mailto:", "tel:+1", "javascript:", "HTTP:", "Https:", "ftp:"])
        prefix += rng.choice(["", "//", "/"]) if rng.random() < 0.5 else ""
        prefix = rng.choice([prefix, "a+b.c-d:", "1a:", " mailto:", "mail to:"])
    if rng.random() < 0.15:  # fragments: dropped, but not what comes before them
        path += rng.choice(["#", "#x/../y", "?q#f", "#a#b", " #f", "\t#f"])
    return prefix + path


def test_join_each_equals_join_on_generated_references() -> None:
    """Plain references of every shape, and near misses, against many bases: the string path
    and the memo give exactly what the parser gives."""
    compiled = compiled_join_plain()
    rng = random.Random(20240611)
    shared = JoinCache()
    plain = total = 0
    for base in _BASES:
        directory = base_directory(base)
        origin = directory[: directory.find("/", directory.index("://") + 3)]
        hrefs = [_random_reference(rng, origin) for _ in range(2_500)]
        expected = [join(base, href) for href in hrefs]
        assert JoinCache().join_each(base, hrefs) == expected, base
        assert shared.join_each(base, hrefs) == expected, base
        found = [_join_plain(href, directory, origin) for href in hrefs]
        assert [compiled(href, directory, origin) for href in hrefs] == found
        plain += sum(url is not None for url in found)
        total += len(hrefs)
    assert total > 30_000
    assert plain > total // 3  # the corpus exercises the string path, not only the parser


def test_compiled_join_plain_on_long_references() -> None:
    """Past the C code's stack buffer (1 KiB): long paths, with and without dot segments."""
    compiled = compiled_join_plain()
    rng = random.Random(7)
    base = "http://127.0.0.1:8088/" + "d/" * 300 + "page.html"
    directory = base_directory(base)
    origin = "http://127.0.0.1:8088"
    for _ in range(300):
        parts = rng.choices(["..", ".", "seg", "x" * 50, ""], k=rng.randrange(1, 120))
        raw = rng.choice(["", "/", origin + "/"]) + "/".join(parts)
        expected = _join_plain(raw, directory, origin)
        assert compiled(raw, directory, origin) == expected, raw
        if expected is not None:
            assert expected == join(base, raw), raw


#: How many generated references the fuzz test gives both twins: CI's size; the one-off
#: run of a million is ``SITECRAWL_JOIN_FUZZ=1000000 pytest -k fuzz tests/test_urls.py``.
JOIN_FUZZ = int(os.environ.get("SITECRAWL_JOIN_FUZZ", "60000"))
_FUZZ_BASES = [
    *_BASES,
    # Directories and origins around and past the C code's 1 KiB stack buffer.
    *("http://h.test/" + "d/" * n + "p.html" for n in (250, 500, 505, 510, 1000)),
    "http://" + "h" * 1000 + ".test/a/",
]
_FUZZ_SOUP = [*_SAFE, "/", "/", ".", ".", "..", "%", "%2e", "?", "#", ":", "é", " ", "\x00"]


def _fuzz_reference(rng: random.Random, origin: str) -> str:
    shape = rng.random()
    if shape < 0.5:
        return _random_reference(rng, origin)
    if shape < 0.7:  # character soup, short
        return "".join(rng.choices(_FUZZ_SOUP, k=rng.randrange(0, 24)))
    # Long paths of dot segments and long segments, around the buffer sizes.
    parts = rng.choices(["..", ".", "", "s", "x" * rng.randrange(1, 600)], k=rng.randrange(1, 60))
    prefix = rng.choice(["", "", "/", origin + "/", origin, origin[:-1] + "/", "//"])
    return prefix + "/".join(parts) + rng.choice(["", "", "/", "/.", "/..", "?q", "é"])


def test_fuzz_the_compiled_join_plain_against_its_python_twin() -> None:
    """Generated references of every shape, long ones past the C buffers included: the C
    function answers exactly what the Python one does (and, on a sample, what the URL
    parser does)."""
    compiled = compiled_join_plain()
    rng = random.Random(1_000_003)
    plain = 0
    for i in range(JOIN_FUZZ):
        base = rng.choice(_FUZZ_BASES)
        directory = base_directory(base)
        origin = directory[: directory.find("/", directory.index("://") + 3)]
        raw = _fuzz_reference(rng, origin)
        expected = _join_plain(raw, directory, origin)
        assert compiled(raw, directory, origin) == expected, (base, raw)
        if expected is not None:
            plain += 1
            if i % 16 == 0:
                assert expected == join(base, raw), (base, raw)
    assert plain > JOIN_FUZZ // 5


def test_join_plain_agrees_with_the_parser_on_the_whatwg_cases() -> None:
    """Every WPT input against every WPT base that parses as an http(s) URL (its canonical
    href, as a crawl passes it; one has a fragment, one userinfo and a port)."""
    import ada_url

    bases = set()
    for case in _whatwg_cases():
        try:
            base = ada_url.URL(case["base"]).href
        except ValueError:
            continue
        if base.startswith(("http://", "https://")):
            bases.add(base)
    hrefs = sorted({case["input"] for case in _whatwg_cases()})
    compiled = compiled_join_plain()
    assert len(bases) > 10
    plain = 0
    for base in sorted(bases):
        expected = [join(base, href) for href in hrefs]
        assert JoinCache().join_each(base, hrefs) == expected, base
        for href, url in zip(hrefs, expected, strict=True):
            got = _join_plain_against(base, href)
            assert _join_plain_against(base, href, compiled) == got, (base, href)
            if got is not None:
                assert got == url, (base, href)
                plain += 1
    assert plain > 100


def test_trap_guard_bounds_length_and_query_variants() -> None:
    from sitecrawl.control import TrapGuard

    guard = TrapGuard(max_url_length=40, max_query_variants=2)
    ok = "https://x.test/cal"
    assert guard.allows(ok, url_key(ok))
    assert not guard.allows(ok + "/" + "a" * 40, url_key(ok + "/" + "a" * 40))
    first, second, third = (f"{ok}?m={i}" for i in range(3))
    assert guard.allows(first, url_key(first))
    assert guard.allows(second, url_key(second))
    assert not guard.allows(third, url_key(third))
    assert guard.allows(first, url_key(first))  # a variant already counted stays allowed
    other = "https://x.test/other?m=9"
    assert guard.allows(other, url_key(other))  # per path


def test_link_targets_memo_is_exact_for_scope_and_traps() -> None:
    from sitecrawl.control import LinkTargets, TrapGuard

    scope = LinkRules(CrawlScope([parse_base_url("http://a.com/")], "site"), Rules())
    targets = LinkTargets(scope, TrapGuard(max_url_length=40, max_query_variants=2), 3)
    links = [
        "http://a.com/cal?m=1",
        "http://a.com/cal?m=2",
        "http://a.com/cal?m=3",
        "http://b.com/x",
        "http://a.com/" + "x" * 40,
        "http://www.a.com/p/",
    ]
    expected = [
        ("http://a.com/cal?m=1", "a.com/cal?m=1"),
        ("http://a.com/cal?m=2", "a.com/cal?m=2"),
        ("http://www.a.com/p/", "www.a.com/p"),
    ]
    assert targets.keyed(links) == expected
    assert targets.rejected == 2
    for _ in range(3):  # the memo (cleared past 3 entries) gives the same answer every time
        assert targets.keyed(links) == expected
    # Offered once, a URL is not offered again while the memo holds it; new ones are, in
    # order, each once however often the page repeats it.
    roomy = LinkTargets(scope, TrapGuard(max_url_length=40, max_query_variants=2))
    assert roomy.keyed(links) == expected
    assert roomy.keyed(links) == []
    more = ["http://a.com/new", *links, "http://a.com/cal?m=9", "http://a.com/new"]
    assert roomy.keyed(more) == [("http://a.com/new", "a.com/new")]
    assert roomy.keyed(more) == []
