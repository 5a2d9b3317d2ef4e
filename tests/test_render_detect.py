"""``auto`` mode's decisions, on data: shell signals, URL templates, per-template learning and
what JavaScript changed (:mod:`sitecrawl.render._detect`, pure)."""

from __future__ import annotations

import pytest

from sitecrawl.parse._extract import Extracted, parse_html
from sitecrawl.render._detect import (
    SAMPLES,
    AutoPolicy,
    TemplateLearner,
    changes,
    gained,
    shell_signal,
    site_links,
    template_of,
)

U = "http://a.test/"
SCRIPT = "<script src='/app.js'></script>"
ARTICLE = " ".join(["word"] * 200)


@pytest.mark.parametrize(
    ("html", "words", "links", "signal"),
    [
        ("<div id='root'></div>" + SCRIPT, 0, 0, "empty root"),
        ('<div id="app">\n  </div>' + SCRIPT, 30, 2, "empty root"),
        ('<div id="__next"><span>Loading…</span></div>' + SCRIPT, 1, 0, "empty root"),
        ("<app-root></app-root>" + SCRIPT, 0, 0, "empty root"),
        (
            "<noscript>You need to enable JavaScript to run this app.</noscript>" + SCRIPT,
            40,
            4,
            "noscript",
        ),
        ("<p>Hi</p>" + SCRIPT, 1, 0, "thin page"),
        ("<div data-reactroot><p>" + ARTICLE[:300] + "</p></div>" + SCRIPT, 60, 5, "framework"),
        # No script: nothing could change the page.
        ("<div id='root'></div>", 0, 0, None),
        # Content: enough words and links to its own host.
        ("<div id='root'></div><noscript>javascript</noscript>" + SCRIPT, 150, 3, None),
        # A root with content in it, words but no link: not a shell.
        ('<div id="root"><h1>Title</h1><p>' + ARTICLE + "</p></div>" + SCRIPT, 200, 0, None),
        ("<p>" + ARTICLE + "</p>" + SCRIPT, 40, 2, None),
    ],
)
def test_shell_signals(html: str, words: int, links: int, signal: str | None) -> None:
    assert shell_signal(html.encode(), words, links) == signal


def test_site_links_counts_links_to_the_page_origin() -> None:
    links = [U + "x", "http://a.test:8080/y", "http://b.test/", U]
    assert site_links(U + "page", links) == 2
    assert site_links(U + "page", links, 1) == 1


@pytest.mark.parametrize(
    ("url", "template"),
    [
        ("https://a.test/item/123?x=1", "a.test/item/#"),
        ("https://a.test/item/123#top", "a.test/item/#"),
        ("https://a.test/p/page-17.html", "a.test/p/page-#.html"),
        ("https://a.test/u/3f2a9c0d1e", "a.test/u/:id"),
        ("https://a.test/o/123e4567-e89b-12d3-a456-426614174000/edit", "a.test/o/:id/edit"),
        ("https://a.test/t/AbCdEf12345678901234", "a.test/t/:id"),
        ("https://a.test/about", "a.test/about"),
        ("https://a.test/", "a.test/"),
    ],
)
def test_template_of_folds_digits_and_ids(url: str, template: str) -> None:
    assert template_of(url) == template


def test_a_template_renders_all_once_a_sample_gained() -> None:
    learner = TemplateLearner()
    learner.observe("t", False)
    assert learner.decision("t") is None
    learner.observe("t", True)
    assert learner.decision("t") is True
    learner.observe("t", False)  # decided: later pages change nothing
    assert learner.decision("t") is True


def test_a_template_renders_none_after_samples_without_gain() -> None:
    learner = TemplateLearner()
    for _ in range(SAMPLES - 1):
        learner.observe("s", False)
        assert learner.decision("s") is None
    learner.observe("s", False)
    assert learner.decision("s") is False


def _data(html: str, url: str = U + "item/1") -> Extracted:
    return parse_html(html, url)


def test_the_policy_follows_signals_then_the_template() -> None:
    policy = AutoPolicy()
    shell = b"<div id='root'></div>" + SCRIPT.encode()
    rich = "<p>" + ARTICLE + "</p><a href='/a'>a</a><a href='/b'>b</a><a href='/c'>c</a>"
    rich_page = (rich + SCRIPT).encode()
    assert policy.why(U + "item/1", shell, _data(shell.decode())) == ("empty root", "a.test/item/#")
    assert policy.why(U + "item/2", rich_page, _data(rich_page.decode())) == (None, "")
    policy.learner.observe("a.test/item/#", True)
    assert policy.why(U + "item/3", rich_page, _data(rich_page.decode()))[0] == "template"
    assert policy.why(U + "item/4", rich.encode(), _data(rich))[0] is None  # no script
    for _ in range(SAMPLES):
        policy.learner.observe("a.test/news/#", False)
    assert policy.why(U + "news/9", shell, _data(shell.decode(), U + "news/9"))[0] is None


def test_gains_and_changes() -> None:
    raw = _data("<title>Loading</title><div id='root'></div><a href='/gone'>g</a>")
    rendered = _data(
        "<title>Shop</title><h1>Shop</h1><a href='/x'>x</a><a href='http://other.test/'>o</a>"
    )
    assert gained(raw, rendered, U + "item/1")
    js_links, changed, values = changes(raw, rendered)
    assert js_links == [U + "x", "http://other.test/"]
    assert changed == ["title", "h1", "links"]
    assert values == {"title": "Loading", "h1": None, "links": [U + "gone"]}
    same = _data("<title>A</title><p>one two</p>")
    assert changes(same, same) == ([], [], {})
    assert not gained(same, same, U)
    assert not gained(same, _data("<p>" + " ".join(["w"] * 10) + "</p>"), U)  # < 20 more words
    assert gained(same, _data("<p>" + " ".join(["w"] * 30) + "</p>"), U)
    robots = _data('<meta name="robots" content="noindex">')
    assert changes(same, robots)[1] == ["title", "robots"]
