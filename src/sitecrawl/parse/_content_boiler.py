"""Boilerplate trafilatura keeps, taken out of a page's tree before it chooses (pure; lxml).

trafilatura drops navigation, headers, footers and most sidebars by itself; what it keeps on
news pages is what sits next to the article's text: share bars, bylines and datelines, photo
captions and credits, newsletter boxes, related-story lists, tag lists, comment counters.
Those carry the names of what they are in their ``class`` or ``id``: :func:`strip_boilerplate`
drops an element whose class or id says so (``article-byline``), unless another of its
classes names content alone (``article-body``, ``entry-content``) or it holds a fifth of the
page's text or more (a container that only mentions ``share`` somewhere). "Read more" is not
among the names: collapsed articles sit in ``entry-content-read-more`` boxes. Measured on the
article-extraction benchmark: ``bench/RESULTS.md`` section 29.
"""

from __future__ import annotations

import re

import lxml.html

#: Whole parts of a class or id (between ``-``/``_``) that name boilerplate.
_PARTS = (
    "share|sharing|social|recommend|recommended|recommendations|newsletter|subscribe"
    "|subscription|signup|byline|author|authors|dateline|timestamp|caption|credit|credits"
    "|comment|comments|tags|promo|trending|popular|most-read|mostread|see-also"
    "|breadcrumb|breadcrumbs|sponsored|copyright|reprint|reprints"
)
#: Words that name boilerplate anywhere in a class or id (``relatedpoststitle``).
_ANYWHERE = "related|outbrain|taboola|disqus|sharebar|share-bar|socialshare|social-share|byline"
BOILERPLATE = re.compile(rf"(?:^|[-_])(?:{_PARTS})(?:[-_]|$)|{_ANYWHERE}")
#: Parts that name content: an element named both ways is kept.
CONTENT = re.compile(r"(?:^|[-_])(?:content|article|body|entry|post|story|text|main)(?:[-_]|$)")
#: Never dropped, whatever their names.
_KEPT = frozenset({"html", "body", "main"})
#: An element with this share of the page's text or more is a container, kept.
CONTAINER_SHARE = 0.2


def is_boilerplate(names: str) -> bool:
    """True when a ``class``/``id`` value (lower case, tokens split by spaces) names
    boilerplate and no other token of it names content alone."""
    tokens = names.split()
    if not any(BOILERPLATE.search(token) for token in tokens):
        return False
    return not any(CONTENT.search(t) and not BOILERPLATE.search(t) for t in tokens)


def strip_boilerplate(tree: lxml.html.HtmlElement) -> int:
    """Drop the elements of ``tree`` (scripts and styles already out) whose class or id names
    boilerplate (:func:`is_boilerplate`), in place; returns how many."""
    body = tree.find("body")
    if body is None:
        return 0
    limit = CONTAINER_SHARE * len(body.text_content())
    dropped = 0
    for element in list(body.iter()):
        if not isinstance(element.tag, str) or element.tag in _KEPT:
            continue
        names = f"{element.get('class') or ''} {element.get('id') or ''}"
        if not names.strip() or not is_boilerplate(names.lower()):
            continue
        if len(element.text_content()) < limit:
            element.drop_tree()
            dropped += 1
    return dropped
