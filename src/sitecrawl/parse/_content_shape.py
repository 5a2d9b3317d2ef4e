"""A news page's shape, mended before trafilatura chooses its main content (pure; lxml).

trafilatura reads the tree with rules that hold for most pages and lose the article on some
common shapes; each step here undoes one shape, in place, on the prepared tree whose
boilerplate-named elements are already out (:mod:`._content_boiler`):

* :func:`join_split_body`: an article cut in pieces (the text in several elements of the same
  tag and class naming the body, ``div.article__body``, with ads and promos between them):
  trafilatura takes the first element of a kind and loses the rest. The pieces' nearest
  common ancestor is named as the body instead, when they hold most of its text. Only pieces
  that hold paragraphs: a list of teasers, each a heading and a line, is left alone.
* :func:`drop_nested_articles`: ``<article>`` elements inside an ``<article>`` are, in the HTML
  standard's words, related to the outer one (comments, related posts), not its text. When an
  article holds two or more, none of them holds half its text and the page's article is
  elsewhere (the outer one's own text, or another article), they go: readability, which
  trafilatura consults, would otherwise take a longer list of related posts for the article.
* :func:`plain_body_names`: trafilatura's discard rules match parts of the whole ``class``
  value (``bar`` in ``barrons-article-wrap``, ``meta``, ``widget``, ``embed``), so an article
  body whose other classes contain one is dropped with the page's chrome. An element named as
  the article's body that holds a tenth of the page's text keeps only its body-naming classes.

Measured on the article-extraction benchmark: ``bench/RESULTS.md`` section 34.
"""

from __future__ import annotations

import re

import lxml.html

from ._content_boiler import is_boilerplate

#: A ``class`` token naming the article's text (``article__body``, ``entry-content``,
#: ``StoryBodyCompanionColumn``, ``post_text``).
BODY_NAME = re.compile(
    r"(?:article|entry|post|story)(?:-|_|__)?(?:body|content|text)|body-text", re.IGNORECASE
)
#: Elements that hold an article's text or its pieces.
_BLOCKS = ("div", "section", "article", "main")
#: A piece of an article holds this many paragraphs with text or more (a teaser: one).
PIECE_PARAGRAPHS = 2
#: An element named as the body with this share of the page's text or more keeps only its
#: body-naming classes (and those that hide it: trafilatura drops hidden elements, rightly).
BODY_SHARE = 0.1
_HIDDEN = re.compile(r"hidden|(?:^|[-_])(?:hide|none)(?:[-_]|$)", re.IGNORECASE)


def reshape(tree: lxml.html.HtmlElement) -> None:
    """All three steps, in order, on the page's prepared ``tree`` (in place)."""
    body = tree.find("body")
    if body is None:
        return
    named = body_named(body)
    join_split_body(body, named)
    drop_nested_articles(body)
    plain_body_names(body, named)


def body_named(body: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The blocks of ``body`` that a class names as the article's text, in document order
    (one pass over the page for both steps that need them)."""
    return [
        element
        for element in body.iter(*_BLOCKS)
        if (names := element.get("class")) and BODY_NAME.search(names)
    ]


def _paragraphs(element: lxml.html.HtmlElement) -> int:
    return sum(1 for p in element.iter("p") if p.text_content().strip())


def _common_ancestor(elements: list[lxml.html.HtmlElement]) -> lxml.html.HtmlElement | None:
    ancestors = list(elements[0].iterancestors())
    for element in elements[1:]:
        mine = set(element.iterancestors())
        ancestors = [a for a in ancestors if a in mine]
    return ancestors[0] if ancestors else None


def join_split_body(
    body: lxml.html.HtmlElement, named: list[lxml.html.HtmlElement] | None = None
) -> int:
    """Name the nearest common ancestor of a split article body's pieces as the body (its
    class becomes the pieces' body-naming classes), so that trafilatura takes all the pieces
    in their order, with what sits between them for its own rules to judge; only when the
    pieces hold most of that ancestor's text. Returns how many bodies were joined."""
    groups: dict[tuple[str, str], list[lxml.html.HtmlElement]] = {}
    for element in body_named(body) if named is None else named:
        key = " ".join((element.get("class") or "").lower().split())
        if not is_boilerplate(key):
            groups.setdefault((str(element.tag), key), []).append(element)
    joined = 0
    for pieces in groups.values():
        if len(pieces) < 2 or _paragraphs(pieces[0]) < PIECE_PARAGRAPHS:
            continue
        members = set(pieces)
        # a piece inside another piece is part of it
        outer = [p for p in pieces if not any(a in members for a in p.iterancestors())]
        container = _common_ancestor(outer) if len(outer) > 1 else None
        if container is None or container.tag not in _BLOCKS:
            continue
        text = sum(len(p.text_content()) for p in outer)
        if 2 * text < len(container.text_content()):
            continue  # the pieces are a part of something larger: not one article
        names = pieces[0].get("class") or ""
        container.set("class", " ".join(t for t in names.split() if BODY_NAME.search(t)))
        joined += 1
    return joined


def drop_nested_articles(body: lxml.html.HtmlElement) -> int:
    """Drop the ``<article>`` elements directly nested in an outer ``<article>`` when there
    are two or more, none holds half of the outer one's text, and something else is the
    article: the outer one's own text is at least theirs, or another top-level article holds
    paragraphs (a feed wrapped in one article keeps its posts). Returns how many went."""
    tops = [a for a in body.iter("article") if next(a.iterancestors("article"), None) is None]
    dropped = 0
    for outer in tops:
        inner = [
            a for a in outer.iterdescendants("article") if next(a.iterancestors("article")) is outer
        ]
        if len(inner) < 2:
            continue
        sizes = [len(a.text_content()) for a in inner]
        total = len(outer.text_content())
        if 2 * max(sizes) > total:
            continue  # one of them is the outer one's text (a wrapper around the article)
        own = total - sum(sizes)
        if own < sum(sizes) and not any(_paragraphs(a) for a in tops if a is not outer):
            continue
        for article in inner:
            article.drop_tree()
            dropped += 1
    return dropped


def plain_body_names(
    body: lxml.html.HtmlElement, named: list[lxml.html.HtmlElement] | None = None
) -> int:
    """Keep only the body-naming class tokens of each element named as the article's body
    that holds :data:`BODY_SHARE` of the page's text; returns how many were renamed."""
    limit = -1.0  # measured when first needed
    renamed = 0
    for element in body_named(body) if named is None else named:
        tokens = (element.get("class") or "").split()
        kept = [t for t in tokens if BODY_NAME.search(t) or _HIDDEN.search(t)]
        if len(kept) == len(tokens):
            continue
        if limit < 0:
            limit = BODY_SHARE * len(body.text_content())
        if len(element.text_content()) < limit:
            continue
        element.set("class", " ".join(kept))
        renamed += 1
    return renamed
