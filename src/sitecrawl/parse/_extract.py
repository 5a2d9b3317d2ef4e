"""HTML -> page data. Pure: strings and bytes in, values out; no network, no state.

The course's helpers (``get_h1_from_html`` and friends) are thin views over :func:`parse_html`,
which parses a document once with Lexbor (selectolax) and pulls every field from that one tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .._models import PARSED_FIELDS, Link
from .._urls import JoinCache, join
from ._linkscan import scan_links
from ._text import clean as _clean
from ._text import inner_text as _inner_text
from ._words import count_words

if TYPE_CHECKING:
    from ._extraction import Extraction


_PARSED = frozenset(PARSED_FIELDS)


@dataclass(slots=True)
class Extracted:
    """Everything read from one HTML document: ``fields``, the record's fields the parser
    fills by name (the :class:`~sitecrawl.Page` subset marked ``parsed``:
    :data:`~sitecrawl._models.PARSED_FIELDS`; each also reads as an attribute,
    ``data.title``), and what only steers the crawl. It crosses the parser processes'
    ``marshal`` pipe as :meth:`wire` makes it."""

    fields: dict[str, Any]
    #: ``outgoing_links`` minus those only ever linked with ``rel="nofollow"``.
    follow_links: list[str] = field(default_factory=list)
    #: The ``content`` of ``<meta name="robots">`` (``noindex``, ``nofollow``, ...).
    robots_meta: str | None = None
    #: The custom extraction rules whose value could not be converted to their type.
    unconverted: list[str] = field(default_factory=list)
    #: Why the content's Markdown could not be made, when a parser was asked for it
    #: (``CrawlConfig.markdown``; made, it is ``fields["markdown"]``): the record keeps the
    #: other fields, with a ``parse`` error.
    markdown_error: str | None = None
    #: What the page makes a browser load that its links do not name (srcset candidates,
    #: inline CSS ``url()``): filled only when asked for (``--archive-assets``;
    #: :func:`~._requisites.page_requisites`).
    requisites: list[str] = field(default_factory=list)

    def wire(self) -> tuple[Any, ...]:
        """What crosses the parser processes' ``marshal`` pipe (:meth:`from_wire` reads it):
        the values of the fields in :data:`~sitecrawl._models.PARSED_FIELDS` order without
        their names (unmarshalling fifteen names again for every page was a fifth of the
        event loop's cost of an answer), any other field by name (``markdown``), then the
        other attributes. Shallow on purpose: ``dataclasses.astuple`` deep-copies every list
        and dict, which cost more than the parse itself."""
        fields = self.fields
        values = tuple([fields[name] for name in PARSED_FIELDS])
        more = {}
        if len(fields) > len(_PARSED):  # (rarely: the child's Markdown)
            more = {k: v for k, v in fields.items() if k not in _PARSED}
        return (
            values,
            more,
            self.follow_links,
            self.robots_meta,
            self.unconverted,
            self.markdown_error,
            self.requisites,
        )

    @classmethod
    def from_wire(cls, answer: tuple[Any, ...]) -> Extracted:
        """The :class:`Extracted` that :meth:`wire` made ``answer`` of."""
        values, more, *rest = answer
        fields = dict(zip(PARSED_FIELDS, values, strict=True))
        if more:
            fields.update(more)
        return cls(fields, *rest)

    def __getattr__(self, name: str) -> Any:
        """A record field the parser filled, by name: ``data.title`` is
        ``data.fields["title"]``. (Only names that are not attributes get here.)"""
        try:
            return object.__getattribute__(self, "fields")[name]
        except KeyError:
            raise AttributeError(name) from None


def _text(node: LexborNode | None) -> str | None:
    return None if node is None else _inner_text(node)


def _attr(node: LexborNode | None, name: str) -> str | None:
    if node is None:
        return None
    value = node.attributes.get(name)
    return value.strip() if value else None


def parse_html(
    html: str,
    page_url: str,
    joins: JoinCache | None = None,
    *,
    link_details: bool = False,
    extraction: Extraction | None = None,
    structured_data: bool = False,
    content_signature: bool = False,
    requisites: bool = False,
) -> Extracted:
    """Parse a document once and extract every field; URLs come back absolute, resolved
    against ``<base href>`` when present, fragments dropped, non-http(s) links skipped.

    ``page_url`` must be a canonical href. A crawl passes one :class:`JoinCache` for all its
    pages; without one, every link is resolved afresh. ``link_details`` also fills
    :attr:`Extracted.links` (every link with its text, rel and kind, for a page store and the
    link check), from the same tree; ``extraction`` runs its rules on the tree too, and
    ``structured_data`` reads its JSON-LD, Microdata and RDFa items (:mod:`._structured`);
    ``content_signature`` signs the body's text without boilerplate (:func:`_content_text`)
    for the near-duplicate audit (``content_hash``, ``content_minhash``); ``requisites``
    fills :attr:`Extracted.requisites` (:mod:`._requisites`)."""
    tree = LexborHTMLParser(html)
    head = _Head.read(tree.head)
    base = page_url
    if head.base and (resolved := join(page_url, head.base)):
        base = resolved
    canonical = head.canonical
    hrefs, rels, texts, srcs, raw_alts, *resources, h2s = scan_links(tree, link_details)
    urls = _join_each(joins, base, hrefs)
    outgoing_links = _distinct(urls)
    nofollow = [i for i, rel in enumerate(rels) if rel and "nofollow" in rel.lower().split()]
    if nofollow:
        skip = set(nofollow)
        follow_links = _distinct(url for i, url in enumerate(urls) if i not in skip)
    else:
        follow_links = outgoing_links
    alts = [None if alt is None else _clean(alt) for alt in raw_alts]
    image_urls = _join_each(joins, base, srcs)
    root = tree.root
    # Page's fields marked ``parsed``, by name (a test holds the two to the same names).
    fields: dict[str, Any] = {
        "title": _text(head.title or _first(tree, "title")),
        "h1": _text(_first(tree, "h1")),
        "first_paragraph": _text(_first_paragraph(tree)),
        "meta_description": head.description,
        "canonical": _join_each(joins, base, [canonical])[0] if canonical else None,
        "outgoing_links": outgoing_links,
        "image_urls": _distinct(image_urls),
        "word_count": None,
        "h2": h2s,
        "lang": _attr(root, "lang") if root is not None else None,
        "hreflang": _hreflang(joins, base, head.hreflang),
        "og_title": head.og_title,
        "extracted": {},
        "links": [],
        "structured_data": [],
        "content_hash": None,
        "content_minhash": None,
    }
    data = Extracted(fields, follow_links, head.robots)
    if texts is not None:  # (link_details)
        links: list[Link] = [
            (url, text, rel.strip() if rel else None, "a")
            for url, text, rel in zip(urls, texts, rels, strict=True)
            if url is not None
        ]
        links += [(url, alt, None, "img") for url, alt in zip(image_urls, alts, strict=True) if url]
        links += _resource_links(resources, base, joins)
        fields["links"] = links
    if requisites:  # (its module only when asked for: --archive-assets)
        from ._requisites import page_requisites

        data.requisites = page_requisites(tree, base, joins)
    # Before the word count, which strips scripts (JSON-LD) from the tree.
    if structured_data:  # (its module, ~55 M instructions to import, only when asked for)
        from ._markup import structured_marks
        from ._structured import structured_data as read_structured_data

        fields["structured_data"] = read_structured_data(tree, base, structured_marks(html))
    if extraction:  # before the word count, which strips scripts (JSON-LD) from the tree
        found = extraction.run(tree, html, page_url)
        fields["extracted"], data.unconverted = found.values, found.unconverted
    fields["word_count"] = _word_count(tree)  # last: it strips scripts and styles from the tree
    if content_signature:  # (its module and C extension only when asked for)
        from ._signature import content_signature as sign

        fields["content_hash"], fields["content_minhash"] = sign(_content_text(tree))
    return data


def _join_each(joins: JoinCache | None, base: str, hrefs: list[str]) -> list[str | None]:
    return joins.join_each(base, hrefs) if joins is not None else [join(base, h) for h in hrefs]


def _hreflang(
    joins: JoinCache | None, base: str, pairs: list[tuple[str, str]]
) -> list[tuple[str, str]]:
    if not pairs:
        return []
    urls = _join_each(joins, base, [href for _, href in pairs])
    return [(lang, url) for (lang, _), url in zip(pairs, urls, strict=True) if url]


def _distinct(urls: Iterable[str | None]) -> list[str]:
    """The URLs that resolved, first occurrence of each, in order."""
    return list(dict.fromkeys(url for url in urls if url is not None))


#: ``<link rel>`` values that name an origin to connect to, not a resource to check.
_CONNECTION_RELS = frozenset({"preconnect", "dns-prefetch"})


def _resource_links(
    found: list[list[tuple[str, str | None]]], base: str, joins: JoinCache | None
) -> list[Link]:
    """``<link href>`` (not preconnect/dns-prefetch), ``<script src>``, ``<iframe src>``, from
    :func:`._linkscan.scan_links`' ``(value, rel)`` of each (one list a tag, in that order)."""
    links: list[Link] = []
    for tag, pairs in zip(("link", "script", "iframe"), found, strict=True):
        values: list[str] = []
        rels: list[str | None] = []
        for value, rel in pairs:
            if not value.strip():
                continue
            rel = rel.strip() if rel else None
            if rel and _CONNECTION_RELS.intersection(rel.lower().split()):
                continue
            values.append(value)
            rels.append(rel)
        links += [
            (url, None, rel, tag)
            for url, rel in zip(_join_each(joins, base, values), rels, strict=True)
            if url is not None
        ]
    return links


@dataclass(slots=True)
class _Head:
    """What a crawler reads from ``<head>``: the first ``<title>``, ``<base href>``,
    canonical link, description, robots and ``og:title`` meta (values stripped, None when
    absent or empty), and every ``<link rel="alternate" hreflang href>`` as ``(lang, raw href)``."""

    title: LexborNode | None = None
    base: str | None = None
    canonical: str | None = None
    description: str | None = None
    robots: str | None = None
    og_title: str | None = None
    hreflang: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def read(cls, head: LexborNode | None) -> _Head:
        """One walk over the head's elements. (It replaces five CSS queries, which cost more:
        selectolax compiles a selector on every call.) The first match of each
        field wins, as ``css_first`` would: ``[href]``, ``rel~="canonical" i``,
        ``meta[name="description" i]``, ``meta[name="robots" i]``,
        ``meta[property="og:title" i]``."""
        found = cls()
        if head is None:
            return found
        seen: set[str] = set()
        for node in head.traverse():
            tag = node.tag
            if tag == "link":
                attributes = node.attributes
                href, rel = attributes.get("href"), attributes.get("rel")
                if href is None or not rel:
                    continue
                rels = rel.lower().split()
                if "canonical" in rels and "canonical" not in seen:
                    seen.add("canonical")
                    found.canonical = href.strip() or None
                lang = attributes.get("hreflang")
                if lang and href and "alternate" in rels:
                    found.hreflang.append((lang.strip(), href))
            elif tag == "meta":
                attributes = node.attributes
                name = attributes.get("name")
                if name is None:
                    prop = attributes.get("property")
                    if prop and prop.lower() == "og:title" and "og:title" not in seen:
                        seen.add("og:title")
                        content = attributes.get("content")
                        found.og_title = (content.strip() or None) if content else None
                    continue
                name = name.lower()
                if name in ("description", "robots") and name not in seen:
                    seen.add(name)
                    content = attributes.get("content")
                    value = content.strip() if content else None
                    if name == "description":
                        found.description = value
                    else:
                        found.robots = value
            elif tag == "title" and found.title is None:
                found.title = node
            elif tag == "base" and "base" not in seen:
                href = node.attributes.get("href")
                if href is not None:
                    seen.add("base")
                    found.base = href.strip() or None
        return found


_NOT_TEXT = ["script", "style", "noscript", "template"]


def _word_count(tree: LexborHTMLParser) -> int:
    """Words of the body's text (runs between whitespace, as ``str.split()`` reads them;
    scripts, styles, noscript and templates left out, which this strips from the tree). Text
    nodes are joined with a space: ``a<b>b</b>`` is two words."""
    body = tree.body
    if body is None:
        return 0
    tree.strip_tags(_NOT_TEXT)
    return count_words(body.text(separator=" "))


#: What the near-duplicate audit leaves out of a page's text besides :data:`_NOT_TEXT`: the
#: site's chrome, the same on every page (the Markdown's ``main`` scope drops more).
_BOILERPLATE = ["nav", "header", "footer", "aside", "form"]


def _content_text(tree: LexborHTMLParser) -> str:
    """The body's text without boilerplate (:data:`_BOILERPLATE`, stripped from the tree;
    after :func:`_word_count`, which strips the rest)."""
    body = tree.body
    if body is None:
        return ""
    tree.strip_tags(_BOILERPLATE)
    return body.text(separator=" ")


def _first(tree: LexborHTMLParser, tag: str) -> LexborNode | None:
    """The first ``tag`` element in document order. (A tag scan costs a quarter of
    ``css_first``, which compiles its selector on every call.)"""
    nodes = tree.tags(tag)
    return nodes[0] if nodes else None


def _first_paragraph(tree: LexborHTMLParser) -> LexborNode | None:
    """The first ``<p>`` of the page's main content: inside ``<main>``, else inside the
    first ``role="main"`` element, else inside the first ``<article>``; else the page's
    first ``<p>``. (Without the middle two, it was a sidebar's or a legal footer's on
    documentation sites that mark their content with ``role="main"`` or ``<article>``.)"""
    main = _first(tree, "main")
    if main is not None and (found := main.css_first("p")) is not None:
        return found
    for container in (tree.css_first('[role="main" i]'), _first(tree, "article")):
        if container is not None and (found := container.css_first("p")) is not None:
            return found
    return _first(tree, "p")


# The course's helpers: the names are a promise to users; each parses its input.


def get_h1_from_html(html: str) -> str:
    """The text of the first ``<h1>``, or ``""``."""
    return _text(_first(LexborHTMLParser(html), "h1")) or ""


def get_first_paragraph_from_html(html: str) -> str:
    """The text of the first ``<p>`` inside ``<main>``, else inside a ``role="main"``
    element, else inside an ``<article>``; else the first ``<p>``, or ``""``."""
    return _text(_first_paragraph(LexborHTMLParser(html))) or ""


def get_urls_from_html(html: str, base_url: str) -> list[str]:
    """Absolute http(s) URLs of the document's ``<a href>`` links, in document order."""
    links: list[str] = parse_html(html, base_url).fields["outgoing_links"]
    return links


def get_images_from_html(html: str, base_url: str) -> list[str]:
    """Absolute URLs of the document's ``<img src>`` images, in document order."""
    images: list[str] = parse_html(html, base_url).fields["image_urls"]
    return images


def extract_page_data(
    html: str,
    page_url: str,
    *,
    extract: Mapping[str, Any] | None = None,
    markdown: bool = False,
) -> dict[str, Any]:
    """All of a page's data as a dict: ``url``, ``title``, ``h1``, ``first_paragraph``,
    ``meta_description``, ``canonical``, ``outgoing_links`` and ``image_urls``; with
    ``extract`` (custom extraction rules, ``{name: spec}``: see :mod:`._extraction`), also
    ``extracted``, rule name -> value. A bad rule raises :class:`ConfigError`. With
    ``markdown``, also ``markdown``: the main content, :func:`~._content.page_markdown`
    (the markdown extra)."""
    from ._extraction import Extraction

    extraction = Extraction.from_specs(extract) if extract else None
    data = parse_html(html, page_url, extraction=extraction)
    extracted: dict[str, Any] = {"extracted": data.extracted} if extraction else {}
    if markdown:
        from ._content import page_markdown

        extracted["markdown"] = page_markdown(html, page_url)
    return {
        "url": page_url,
        "title": data.title,
        "h1": data.h1 or "",
        "first_paragraph": data.first_paragraph or "",
        "meta_description": data.meta_description,
        "canonical": data.canonical,
        "outgoing_links": data.outgoing_links,
        "image_urls": data.image_urls,
        **extracted,
    }
