"""A parsed page's links, read in one walk over its elements.

:func:`scan_links` gives, in document order: each ``<a href>``'s ``href``, ``rel`` and (with
``details``) its text as a browser shows it (:func:`._text.inner_texts`); each ``<img src>``'s
``src`` and raw ``alt``; and (with ``details``) the ``(value, rel)`` of each ``<link href>``,
``<script src>`` and ``<iframe src>``, one list a tag; and each ``<h2>``'s text (read in the
same walk: the page record's ``h2``). An attribute without a value reads as absent, as
selectolax's ``attributes`` gives it (None).

The walk is compiled (``sitecrawl.parse._links``, calling the Lexbor that selectolax's extension
carries) when the C extension was built and binds; :func:`scan_links_py` is its Python twin,
five selectolax tag scans and a node object for every element they find. The tests hold the
two to the same answers. Bound, the compiled walk is checked once against the twin on a page
of every case it reads (:data:`_PROBE`); any difference and the twin is used.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ._text import inner_texts

#: ``(hrefs, rels, texts, srcs, alts, links, scripts, iframes, h2s)``: ``texts`` is None
#: without details, and ``links``, ``scripts`` and ``iframes`` are empty.
Found = tuple[
    list[str],
    list[str | None],
    list[str] | None,
    list[str],
    list[str | None],
    list[tuple[str, str | None]],
    list[tuple[str, str | None]],
    list[tuple[str, str | None]],
    list[str],
]


def _tagged(
    tree: LexborHTMLParser, tag: str, name: str, other: str
) -> list[tuple[LexborNode, str, str | None]]:
    """Each ``tag`` element with a ``name`` attribute: the node, that value and ``other``'s."""
    found = []
    for node in tree.tags(tag):
        attributes = node.attributes
        value = attributes.get(name)
        if value is not None:
            found.append((node, value, attributes.get(other)))
    return found


def scan_links_py(tree: LexborHTMLParser, details: bool) -> Found:
    """:func:`scan_links` in Python."""
    anchors = _tagged(tree, "a", "href", "rel")
    hrefs = [href for _, href, _ in anchors]
    rels = [rel for _, _, rel in anchors]
    images = _tagged(tree, "img", "src", "alt")
    srcs = [src for _, src, _ in images]
    alts = [alt for _, _, alt in images]
    h2s = inner_texts(tree.tags("h2"))
    if not details:
        return hrefs, rels, None, srcs, alts, [], [], [], h2s
    links, scripts, iframes = (
        [(value, rel) for _, value, rel in _tagged(tree, tag, name, "rel")]
        for tag, name in (("link", "href"), ("script", "src"), ("iframe", "src"))
    )
    texts = inner_texts(node for node, _, _ in anchors)
    return hrefs, rels, texts, srcs, alts, links, scripts, iframes, h2s


#: A page with every case the walk reads: nested and empty anchors, text split by block and
#: inline elements and comments, whitespace of every kind, attributes without values, SVG.
_PROBE = (
    "<html><head><link rel=stylesheet href=/s.css><link href><script src=/a.js></script>"
    "<script>x()</script></head><body><a href=/1 rel=nofollow>one\u00a0 <b>two</b></a>"
    "<a href>skip</a><a href=''></a><a href=/2><div>a</div>b<br>c<!-- no -->d</a>"
    "<h2>A <b>head</b><br>ing</h2><p><a href=/3>\t\x1c lots \r\n of   space </a>"
    "<img src=/i.png alt=' an  image '><img alt=x><img src=/j.png></p>"
    "<svg><a href=/svg><text>in svg</text></a></svg>"
    "<iframe src=/f></iframe><a href=/4><span>in</span><em>line</em></a>"
    "<template><a href=/t>template</a></template></body></html>"
)


def _bind() -> Callable[[LexborHTMLParser, bool], Found] | None:
    try:
        import selectolax.lexbor as lexbor

        from ._links import bind, scan
    except ImportError:
        return None
    try:
        bind(lexbor.__file__)
    except ImportError:
        return None

    def scan_links_c(tree: LexborHTMLParser, details: bool) -> Found:
        root = tree.root
        document = root.parent if root is not None else None
        if root is None or document is None:  # (no <html>: nothing for either to find)
            return scan_links_py(tree, details)
        return cast(Found, scan(root.mem_id, document.mem_id, details))

    probe = LexborHTMLParser(_PROBE)
    if any(scan_links_c(probe, d) != scan_links_py(probe, d) for d in (False, True)):
        return None
    return scan_links_c


_compiled = _bind()
#: The walk: compiled when bound (:data:`compiled` is True), else its Python twin.
scan_links: Callable[[LexborHTMLParser, bool], Found] = _compiled or scan_links_py
compiled = _compiled is not None
