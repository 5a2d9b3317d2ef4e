"""The fast path of the main content: semantic pages skip trafilatura (pure; lxml).

A page whose content is marked up the way HTML means it -- exactly one ``<main>`` (or, with
none, exactly one ``<article>``), and inside it nothing but content elements (paragraphs,
headings, lists, tables, code, quotes, figures, inline markup, the page's one ``<article>``)
besides the sections HTML names
as not content (``nav``, ``aside``, ``footer``, ``form``; a ``header`` inside is the
content's own, its title) -- has told us where its
content is: :func:`semantic_main` finds that element, :func:`main_content` takes the named
sections (and elements whose class or id names boilerplate: :mod:`._content_boiler`) out of
it, and html-to-markdown writes it. trafilatura costs ~10 ms a page; this ~1 ms.

A single ``<div>``, ``<iframe>`` or ``<button>`` inside, or a second ``<article>`` on the page
(ad slots, embeds, teasers: the way news sites build pages) sends the page to trafilatura, so
the fast path takes no page of the article-extraction benchmark and its F1 stays that of
trafilatura's path (``bench/RESULTS.md`` section 29).
"""

from __future__ import annotations

import lxml.html
from lxml import etree

from ._content_boiler import is_boilerplate

#: Sections HTML names as not the page's content: dropped from the main element.
NOT_CONTENT = ("nav", "aside", "footer", "form")
#: Never content, dropped by the tree's preparation already.
_GONE = frozenset({"script", "style", "noscript", "template", "svg"})
#: What may be inside a semantic main element (with :data:`NOT_CONTENT` and :data:`_GONE`).
CONTENT_TAGS = frozenset(
    {
        *("p", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "br", "section", "details", "summary"),
        *("ul", "ol", "li", "dl", "dt", "dd", "pre", "code", "blockquote", "q", "cite"),
        *("table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col"),
        *("figure", "figcaption", "img", "picture", "source", "a", "span", "time", "abbr"),
        *("em", "strong", "b", "i", "u", "s", "small", "sub", "sup", "mark", "del", "kbd"),
        *("samp", "var", "wbr", "header"),
        *NOT_CONTENT,
        *_GONE,
    }
)
#: A fast-path page has at least this many words in its main element (else trafilatura).
MIN_WORDS = 50


def semantic_main(tree: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The page's one ``<main>`` (else its one ``<article>``; a page with two of either has
    none) when everything inside it is a content element or a section HTML names as not
    content, with :data:`MIN_WORDS` words or more; None otherwise."""
    mains = list(tree.iter("main"))
    articles = list(tree.iter("article"))
    if len(mains) > 1 or len(articles) > 1:
        return None
    if mains:
        candidate = mains[0]
    elif articles:
        candidate = articles[0]
    else:
        return None
    for element in candidate.iterdescendants():
        tag = element.tag
        if not isinstance(tag, str):
            continue  # comments and processing instructions
        if tag not in CONTENT_TAGS and tag != "article":  # (the page's one article)
            return None
    words = 0
    for text in candidate.itertext():
        words += len(text.split())
        if words >= MIN_WORDS:
            return candidate
    return None


def main_content(main: lxml.html.HtmlElement) -> str:
    """``main`` (prepared: URLs resolved, figures flattened) as HTML for the converter,
    without its navigation, asides, footers, forms and the elements named as boilerplate."""
    for element in list(main.iter(*NOT_CONTENT)):
        if element is not main:
            element.drop_tree()
    for element in list(main.iterdescendants()):
        names = f"{element.get('class') or ''} {element.get('id') or ''}"
        if names.strip() and is_boilerplate(names.lower()):
            element.drop_tree()
    # etree's: lxml.html.tostring runs a regex over the result for <meta> content types.
    return str(etree.tostring(main, method="html", encoding="unicode", with_tail=False))
