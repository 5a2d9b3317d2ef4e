"""The trees behind :func:`~sitecrawl.parse._content.page_markdown` (needs the markdown extra).

Pure steps over lxml trees, each fixing what a library would get wrong on its own:

* :func:`prepare` edits the page's tree before any library reads it: every link and image
  URL resolved with :func:`~sitecrawl._urls.join` against ``<base href>`` (itself resolved
  against the page URL) -- trafilatura 2.3 resolves ``href="api.html"`` on
  ``/docs/guide.html`` to ``/api.html`` --; ``javascript:`` links unwrapped and ``data:`` or
  unresolvable images dropped; each ``<pre>`` reduced to one ``<code>`` that names its language
  (from ``language-x``, ``lang-x``, ``highlight-x``, ``highlight-source-x`` classes on the
  block, its code or their two nearest ancestors, or ``data-lang``): trafilatura would turn a
  ``<pre>`` with no code-like text into a quote, and html-to-markdown only reads
  ``language-x``/``lang-x`` on the ``<code>``.
* In the main scope, images go through trafilatura as markers in the text (``⟦n⟧``) and
  :func:`~._content_xml.put_images` turns the markers it kept back into images: an image
  stays when the text around it stays. trafilatura's own ``include_images`` keeps galleries
  and captions as text (precision lost on the article benchmark: ``bench/RESULTS.md``
  section 17). A ``<figure>`` becomes a paragraph of its images, its caption their title.
* :func:`~._content_xml.main_html` turns trafilatura's extracted tree into HTML for the
  converter, ordered lists, quotes and code blocks kept (see :mod:`._content_xml`).
* :func:`full_html` is the whole page with scripts, styles and templates out.
* A semantic page (:func:`~._content_fast.semantic_main`) skips trafilatura: its main
  element, prepared, goes to the converter (:func:`~._content_fast.main_content`); any other
  page loses its boilerplate-named elements (:func:`~._content_boiler.strip_boilerplate`),
  has its shape mended where trafilatura would lose the article (:func:`~._content_shape.reshape`:
  a body cut in pieces, nested related articles, body classes that trafilatura's discard rules
  match) and goes through :func:`extract` (trafilatura, precision mode first).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import html_to_markdown
import lxml.html
import trafilatura
from lxml import etree

from .._exceptions import ParseError
from .._urls import join
from ._content_boiler import strip_boilerplate
from ._content_fast import main_content, semantic_main
from ._content_shape import reshape
from ._content_xml import LANGUAGE_CLASS, code_text, main_html, put_images

#: Not languages: the generic classes highlighters put beside one.
_NOT_LANGUAGES = frozenset({"none", "plaintext", "text", "nohighlight", "source", "js-file-line"})
_BLANK_RUNS = re.compile(r"\n{3,}")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*>")
#: URL schemes a Markdown link keeps as they are (join() only resolves http and https).
_KEPT_SCHEMES = ("mailto:", "tel:")
#: Elements that are never content, in either scope (an inline ``<svg>`` would come out as
#: a ``data:`` image).
_NEVER = ("script", "style", "noscript", "template", "svg")
#: What makes a figure more than pictures: left as it is.
_FIGURE_CONTENT = ("pre", "table", "blockquote", "ul", "ol", "video", "audio", "iframe")
#: C0 controls other than tab and line breaks: lxml refuses some, trafilatura drops a page
#: with a NUL in it.
_CONTROLS = dict.fromkeys([*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])
#: Comments out at parse time: a comment's tail is text (``had suffered<!-- --> months``),
#: and trafilatura drops a comment with its tail.
_PARSER = lxml.html.HTMLParser(collect_ids=False, remove_comments=True, remove_pis=True)


def document(text: str) -> lxml.html.HtmlElement | None:
    """The page's tree, or None for a page with no markup at all."""
    text = _XML_DECLARATION.sub("", text, count=1)  # lxml refuses a str that declares one
    text = text.translate(_CONTROLS)  # (a fifth of a regex's time)
    if not text.strip():
        return None
    try:
        return lxml.html.document_fromstring(text, parser=_PARSER)
    except (etree.ParserError, ValueError):
        return None


def base_url(tree: lxml.html.HtmlElement, url: str) -> str:
    """The URL relative references resolve against: ``<base href>`` joined to ``url``."""
    for base in tree.iter("base"):
        href = base.get("href")
        if href is not None:
            return join(url, href.strip()) or url
    return url


def resolve(base: str, href: str) -> str | None:
    """``href`` as an absolute URL (its fragment kept), ``mailto:``/``tel:`` as they are; None
    for what no reader could follow (``javascript:``, ``data:``, a broken URL)."""
    href = href.strip()
    if href.lower().startswith(_KEPT_SCHEMES):
        return href
    path, hash_mark, fragment = href.partition("#")
    resolved = join(base, path)
    if resolved is None:
        return None
    return f"{resolved}#{fragment}" if hash_mark else resolved


def code_language(pre: lxml.html.HtmlElement) -> str | None:
    """The language a code block names, looking at the block, its ``<code>`` and the block's
    two nearest ancestors (Rouge wraps ``pre.highlight`` in ``div.language-x``)."""
    places = [pre, *pre.iter("code")][:2]
    parent = pre.getparent()
    if parent is not None:
        places.append(parent)
        grandparent = parent.getparent()
        if grandparent is not None:
            places.append(grandparent)
    for element in places:
        named = str(element.get("data-lang") or element.get("data-language") or "").strip()
        if named and named.lower() not in _NOT_LANGUAGES:
            return named.lower()
        for found in LANGUAGE_CLASS.finditer(element.get("class") or ""):
            language = found.group(1).lower()
            if language not in _NOT_LANGUAGES:
                return language
    return None


def prepare(
    tree: lxml.html.HtmlElement,
    url: str,
    images: list[tuple[str, str, str]] | None = None,
    *,
    root: lxml.html.HtmlElement | None = None,
) -> None:
    """Resolve URLs, drop what is never content, and normalize code blocks, in place.

    With ``images`` (a list to fill), each image becomes a marker in the text, ``⟦n⟧`` for
    ``images[n]`` = (src, alt, title), and each figure a paragraph: see :func:`put_images`.
    With ``root``, only that element of ``tree`` is prepared (the fast path's main element).
    """
    base = base_url(tree, url)
    tree = tree if root is None else root
    for element in list(tree.iter(*_NEVER)):
        element.drop_tree()
    for anchor in list(tree.iter("a")):
        href = anchor.get("href")
        if href is None:
            continue
        target = resolve(base, href)
        if target is None:
            anchor.drop_tag()
        else:
            anchor.set("href", target)
    for image in list(tree.iter("img")):
        _resolve_image(image, base)
    if images is not None:
        for figure in list(tree.iter("figure")):
            _flatten_figure(figure)
        for image in list(tree.iter("img")):
            _mark_image(image, images)
    for pre in list(tree.iter("pre")):
        _normalize_code_block(pre)


def _mark_image(image: lxml.html.HtmlElement, images: list[tuple[str, str, str]]) -> None:
    marker = f"\u27e6{len(images)}\u27e7"
    images.append((image.get("src") or "", image.get("alt") or "", image.get("title") or ""))
    image.tail = marker + (image.tail or "")
    image.drop_tree()  # keeps the tail, marker first


def _flatten_figure(figure: lxml.html.HtmlElement) -> None:
    """A ``<figure>`` of images as a paragraph of its images only, its text (caption, credit)
    their title: trafilatura drops a figure when it leaves images out, and a caption is not
    the article's text. Another figure is unwrapped."""
    images = list(figure.iter("img"))
    if not images or next(figure.iter(*_FIGURE_CONTENT), None) is not None:
        # A quote, a code listing or a table in a figure is content, and so is its caption
        # (an attribution, a file name): unwrapped, as trafilatura drops figures.
        for caption in figure.iter("figcaption"):
            caption.tag = "p"
        figure.drop_tag()
        return
    caption = " ".join(str(figure.text_content()).split())
    for image in images:
        if caption and not image.get("title"):
            image.set("title", caption)
    for child in list(figure):
        figure.remove(child)
    figure.text = None
    figure.extend(images)
    for image in images:
        image.tail = None
    figure.tag = "p"
    figure.attrib.clear()


def _resolve_image(image: lxml.html.HtmlElement, base: str) -> bool:
    """Point ``src`` at the first candidate that is a web URL (lazy loaders keep the real one
    in ``data-src``); drop the image when none is (False)."""
    for name in ("src", "data-src", "data-original", "data-lazy-src"):
        value = image.get(name)
        target = resolve(base, value) if value else None
        if target is not None and target.startswith(("http://", "https://")):
            image.set("src", target)
            for other in ("data-src", "data-original", "data-lazy-src", "srcset"):
                image.attrib.pop(other, None)
            return True
    image.drop_tree()
    return False


def _normalize_code_block(pre: lxml.html.HtmlElement) -> None:
    language = code_language(pre)
    text = code_text(pre)
    if not text.strip():
        pre.drop_tree()
        return
    for child in list(pre):
        pre.remove(child)
    pre.text = None
    for name in list(pre.attrib):
        del pre.attrib[name]
    code = etree.SubElement(pre, "code")
    code.text = text
    if language:
        code.set("class", f"language-{language}")
        # trafilatura keeps a block with a ``lang`` as code whatever its text looks like
        pre.set("lang", language)


def full_html(tree: lxml.html.HtmlElement) -> str:
    """The whole prepared page as HTML (scripts and styles are already out)."""
    return str(lxml.html.tostring(tree, encoding="unicode"))


_HTML_OPTIONS = html_to_markdown.ConversionOptions(
    extract_metadata=False,  # no front matter: the record carries title and description
    bullets="-",
    # The content is chosen already (main) or wanted whole (full): the converter drops nothing.
    preprocessing=html_to_markdown.PreprocessingOptions(enabled=False),
)


#: An extraction in precision mode with fewer words than this is made again in the default
#: mode (precision mode leaves some pages empty: ``bench/RESULTS.md`` section 29).
PRECISION_FLOOR = 50


def extract(tree: lxml.html.HtmlElement, *, include_images: bool = False) -> etree._Element | None:
    """trafilatura's extracted body (its XML) of the prepared ``tree``, None when it found none.

    Precision mode (``favor_precision``) first: on the article benchmark it drops more of what
    sits around an article (F1 0.960 -> 0.969 with :func:`strip_boilerplate`, section 29); a
    page it leaves with fewer than :data:`PRECISION_FLOOR` words is extracted again in the
    default mode (trafilatura copies the tree: ``tree`` is the same for both).
    """

    def run(precision: bool) -> etree._Element | None:
        extracted = trafilatura.bare_extraction(
            tree,
            favor_precision=precision,
            include_comments=False,
            include_tables=True,
            include_images=include_images,
            include_formatting=True,
            include_links=True,
            with_metadata=False,
        )
        return getattr(extracted, "body", None)

    body = run(True)
    if body is not None and len(" ".join(map(str, body.itertext())).split()) >= PRECISION_FLOOR:
        return body
    fallback = run(False)
    return fallback if fallback is not None else body


def _options_once() -> Callable[[str], Any]:
    """html-to-markdown's ``convert`` with :data:`_HTML_OPTIONS` turned into its Rust options
    once: its ``convert`` does that on every call (~0.25 ms, a sixth of a fast-path page).
    Through the package's private module, so its public ``convert`` when that moved."""
    try:
        rust = getattr(html_to_markdown.api, "_rust")  # noqa: B009 (private: no stub)
        options = html_to_markdown.api._to_rust_conversion_options(_HTML_OPTIONS)
        rust_convert = rust.convert
    except AttributeError:  # pragma: no cover - another html-to-markdown
        return lambda html: html_to_markdown.convert(html, _HTML_OPTIONS)
    return lambda html: rust_convert(html=html, options=options, visitor=None)


_to_markdown = _options_once()


def convert(text: str, url: str, scope: str) -> str:
    """The page's Markdown (see :func:`sitecrawl.parse._content.page_markdown`)."""
    tree = document(text)
    if tree is None:
        return ""
    main = semantic_main(tree) if scope == "main" else None
    if main is not None:  # the fast path: the page says where its content is
        prepare(tree, url, root=main)
        for figure in list(main.iter("figure")):
            _flatten_figure(figure)
        html = main_content(main)
    elif scope == "full":
        prepare(tree, url)
        html = full_html(tree)
    else:
        # Images go through the extraction as markers in the text: an image stays where its
        # text stays (trafilatura's include_images keeps galleries and captions the text
        # would not).
        images: list[tuple[str, str, str]] | None = None if "\u27e6" in text else []
        prepare(tree, url, images)
        strip_boilerplate(tree)
        reshape(tree)
        body = extract(tree, include_images=images is None)
        if body is None:
            return ""
        html = put_images(main_html(body), images or [])
    try:
        result = _to_markdown(html)
    except html_to_markdown.ConversionError as exc:
        raise ParseError(f"Markdown conversion failed: {exc}", url=url) from exc
    markdown = (result.content or "").strip()
    if "\n\n\n" in markdown:  # (the test is a tenth of the substitution's time)
        markdown = _BLANK_RUNS.sub("\n\n", markdown)
    return markdown + "\n" if markdown else ""
