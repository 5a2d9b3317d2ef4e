"""The compiled link walk (``sitecrawl.parse._links``) against its Python twin: the same
anchors, images, texts, resources and ``<h2>`` texts, and the same page fields from
``parse_html``, on
generated pages of every case the walk reads and on the test sites' pages."""

from __future__ import annotations

import random

import pytest
from selectolax.lexbor import LexborHTMLParser

from servers import link_graph
from sitecrawl.parse import _extract, _linkscan
from speedups import require_speedups

#: Pieces a page is made of, at random: anchors with and without href or text, nested
#: elements that break words (block, <br>) and that do not (inline), comments, whitespace of
#: every kind str.split knows (NBSP, ideographic space, \x1c), attributes without values,
#: upper case, SVG, templates, tables, unclosed and stray tags, non-ASCII text.
PIECES = [
    "<a href='/a{n}'>",
    "<a href=/b{n} rel='nofollow ugc'>",
    "</a>",
    "<a>",
    "<a href>",
    "<a href=''>",
    "<A HREF=/UP{n}>",
    "<div>",
    "</div>",
    "<span>",
    "</span>",
    "<b>",
    "</b>",
    "<br>",
    "<p>",
    "</p>",
    "<li>",
    "<h2>",
    "</h2>",
    "<!-- a comment -->",
    "word",
    "more words",
    " \t\n ",
    "\u00a0",
    "\u3000x",
    "a\x1cb",
    "\r\n",
    "café",
    "日本語",
    "&amp; &lt;",
    "<img src=/i{n}.png alt=' an\u00a0 image '>",
    "<img alt=no-src>",
    "<img src>",
    "<img src=/j{n}.png>",
    "<link rel=stylesheet href=/c{n}.css>",
    "<link rel='preconnect' href=//cdn.test>",
    "<link href>",
    "<script src=/s{n}.js></script>",
    "<script>var a = '<a href=/no>';</script>",
    "<iframe src=/f{n}></iframe>",
    "<table><tr><td>",
    "</td></tr></table>",
    "<svg><a href=/svg{n}><text>svg text</text></a></svg>",
    "<template><a href=/t{n}>in a template</a></template>",
    "<textarea><a href=/no></textarea>",
    "<noscript><a href=/ns{n}>ns</a></noscript>",
    "<select><option>opt</option></select>",
    "<pre>  pre  text </pre>",
    "<custom-el>custom</custom-el>",
]


def generated(seed: int) -> str:
    rng = random.Random(seed)
    body = "".join(rng.choice(PIECES).format(n=k) for k in range(rng.randint(1, 80)))
    head = "<link rel=icon href=/favicon.ico><script src=/head.js></script>" if seed % 3 else ""
    return f"<!doctype html><html><head><title>t</title>{head}</head><body>{body}</body></html>"


def site_pages() -> list[str]:
    """Pages shaped like the test site's (``servers.site_app``)."""
    graph = link_graph(40)
    return [
        "<html><body>"
        + "".join(f"<a href='/p/{j}'>page {j}</a> <a href='#top'>top</a>" for j in graph[i])
        + f"<a href='mailto:x@example.com'>mail</a><img src='/img/{i}.png'></body></html>"
        for i in graph
    ]


@pytest.fixture(autouse=True)
def compiled() -> None:
    require_speedups("sitecrawl.parse._links")
    assert _linkscan.compiled, "sitecrawl.parse._links was built but did not bind"


@pytest.mark.parametrize("details", [False, True])
def test_the_walk_reads_what_its_twin_reads(details: bool) -> None:
    pages = [generated(seed) for seed in range(400)] + site_pages() + [_linkscan._PROBE]
    for html in pages:
        tree = LexborHTMLParser(html)
        assert _linkscan.scan_links(tree, details) == _linkscan.scan_links_py(tree, details), html


def test_the_generated_pages_hold_every_case() -> None:
    """The comparison above is only as good as its pages: they hold anchors with texts split
    by breaks, non-ASCII spaces, resources, and anchors the walk must skip."""
    found = [_linkscan.scan_links_py(LexborHTMLParser(generated(s)), True) for s in range(400)]
    texts = [text for f in found for text in f[2] or []]
    assert any(" " in text and "word" in text for text in texts)
    assert "" in texts
    assert any(f[5] for f in found) and any(f[6] for f in found) and any(f[7] for f in found)
    assert any(alt is not None and "\u00a0" in alt for f in found for alt in f[4])
    assert any(" " in h2 for f in found for h2 in f[8])
    hrefs = {href for f in found for href in f[0]}
    assert "" in hrefs and "/no" not in hrefs
    assert not any(href.startswith("/t") for href in hrefs)  # a template's content is not read


def test_parse_html_gives_the_same_page_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    pages = [generated(seed) for seed in range(150)]
    url = "http://127.0.0.1:1/dir/page.html"
    compiled = [_extract.parse_html(html, url, link_details=True).wire() for html in pages]
    monkeypatch.setattr(_extract, "scan_links", _linkscan.scan_links_py)
    twin = [_extract.parse_html(html, url, link_details=True).wire() for html in pages]
    assert compiled == twin
    assert any(wire[0][list(_extract.PARSED_FIELDS).index("links")] for wire in compiled)
