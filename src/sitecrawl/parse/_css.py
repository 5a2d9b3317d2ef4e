"""The URLs a stylesheet makes the browser load (``--archive-assets``): each ``url()``
(backgrounds, ``@font-face`` sources, cursors, masks), each string of ``image-set()``, and
each ``@import``, as written (not resolved), in order. Pure.

Read with tinycss2 (the CSS Syntax Level 3 tokenizer, Kozea's, WeasyPrint's): comments,
strings, escapes (``url(a\\)b.png)``) and nesting come right without a regex's guesses, and a
stylesheet is read once a crawl (bench/RESULTS.md section 36 measures it). A body is decoded
as the CSS standard says: a BOM, then the ``Content-Type`` charset, then ``@charset``, else
UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .._exceptions import MissingExtra

try:
    import tinycss2
    from tinycss2.bytes import decode_stylesheet_bytes
except ImportError:  # the warc extra brings it
    raise MissingExtra(
        "reading stylesheets (--archive-assets) needs tinycss2: pip install 'sitecrawl[warc]'",
        extra="warc",
    ) from None

#: Functions whose string arguments are URLs (``url("a.png")``; ``image-set("a.png" 1x)``).
_URL_FUNCTIONS = frozenset({"url", "src", "image-set", "-webkit-image-set"})


def css_urls(css: str) -> list[str]:
    """The URLs named in ``css`` (a stylesheet, a ``<style>`` block or a ``style``
    attribute), in order, blank ones left out."""
    urls: list[str] = []
    _walk(tinycss2.parse_component_value_list(css, skip_comments=True), urls)
    return [url for url in urls if url.strip()]


def stylesheet_urls(body: bytes, charset: str | None) -> list[str]:
    """:func:`css_urls` of a stylesheet's body, decoded as a browser would (``charset``:
    the ``Content-Type``'s)."""
    text, _encoding = decode_stylesheet_bytes(body, protocol_encoding=charset)
    return css_urls(text)


def _walk(nodes: Iterable[Any], urls: list[str]) -> None:
    importing = False  # after ``@import``: its first string is a URL
    for node in nodes:
        kind = node.type
        if kind == "whitespace":
            continue
        if kind == "url" or (kind == "string" and importing):
            urls.append(node.value)
        elif kind == "function":
            if node.lower_name in _URL_FUNCTIONS:
                urls += [arg.value for arg in node.arguments if arg.type == "string"]
            _walk(node.arguments, urls)
        elif kind in ("() block", "[] block", "{} block"):
            _walk(node.content, urls)
        importing = kind == "at-keyword" and node.lower_value == "import"
