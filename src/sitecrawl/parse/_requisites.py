"""What a page makes the browser load that its links do not name (``--archive-assets``):
the candidates of ``<img srcset>``, ``<source srcset>`` (``<picture>``) and a preload's
``<link imagesrcset>``, a ``<video poster>``, an ``<input type=image src>``, and the
``url()`` and ``@import`` targets of its ``<style>`` blocks and ``style=""`` attributes.
(Audio and video themselves are not requisites: a replay shows the poster.)
Pure: a parsed tree in, absolute URLs out. The parser reads them only when asked
(:attr:`~._extract.Extracted.requisites`), so a crawl without an archive pays nothing.

``srcset`` is read as the HTML standard's "parse a srcset attribute" does (a URL, then its
descriptors; a comma may be part of a URL; a candidate whose descriptors a browser rejects
is dropped, as it would never be loaded).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .._urls import JoinCache, join

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser

_SPACE = " \t\n\f\r"  # ASCII whitespace, as the HTML standard means it
_SPLIT = _SPACE + ","
_INTEGER = re.compile(r"[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def srcset_urls(value: str) -> list[str]:
    """The URLs of a ``srcset`` attribute's valid candidates, as written (not resolved), in
    order: the HTML standard's "parse a srcset attribute" (its descriptors checked, not
    kept)."""
    urls: list[str] = []
    end = len(value)
    at = 0
    while True:
        while at < end and value[at] in _SPLIT:  # the splitting loop
            at += 1
        if at >= end:
            return urls
        start = at
        while at < end and value[at] not in _SPACE:
            at += 1
        url = value[start:at]
        descriptors: list[str] = []
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            at = _descriptors(value, at, descriptors)
        if url and _valid(descriptors):
            urls.append(url)


def _descriptors(value: str, at: int, out: list[str]) -> int:
    """Tokenize the descriptors from ``at`` into ``out``; return where the next candidate
    starts (the standard's states: in descriptor, in parens, after descriptor)."""
    end = len(value)
    while at < end and value[at] in _SPACE:
        at += 1
    current = ""
    state = "in"
    while at < end:
        char = value[at]
        at += 1
        if state == "in":
            if char in _SPACE:
                if current:
                    out.append(current)
                    current = ""
                state = "after"
            elif char == ",":
                if current:
                    out.append(current)
                return at
            elif char == "(":
                current += char
                state = "parens"
            else:
                current += char
        elif state == "parens":
            current += char
            if char == ")":
                state = "in"
        elif char not in _SPACE:  # after a descriptor: read again as in one (a comma ends)
            at -= 1
            state = "in"
    if current:  # the end of the attribute
        out.append(current)
    return at


def _valid(descriptors: list[str]) -> bool:
    """Whether a candidate's descriptors are valid: at most one width (``Nw``, N > 0) or
    density (``Fx``, F >= 0), a height (``Nh``) only with a width."""
    width = density = height = False
    for descriptor in descriptors:
        number, kind = descriptor[:-1], descriptor[-1:]
        if kind == "w" and _INTEGER.fullmatch(number):
            if width or density or int(number) == 0:
                return False
            width = True
        elif kind == "x" and _FLOAT.fullmatch(number):
            if width or density or height or float(number) < 0:
                return False
            density = True
        elif kind == "h" and _INTEGER.fullmatch(number):
            if height or density or int(number) == 0:
                return False
            height = True
        else:
            return False
    return not height or width


def page_requisites(tree: LexborHTMLParser, base: str, joins: JoinCache | None) -> list[str]:
    """The absolute http(s) URLs of the page's srcset candidates, posters, image inputs and
    inline CSS references (``<style>`` blocks, ``style=""`` attributes), each once, in
    order: resolved against
    ``base`` (the page's base URL); ``data:`` and other schemes, and references to a
    fragment only (``url(#clip)``: this very page), left out."""
    raw: list[str] = []
    for tag, name in (("img", "srcset"), ("source", "srcset"), ("link", "imagesrcset")):
        for node in tree.tags(tag):
            srcset = node.attributes.get(name)
            if srcset:
                raw += srcset_urls(srcset)
    for node in tree.tags("video"):
        if poster := (node.attributes.get("poster") or "").strip(_SPACE):
            raw.append(poster)
    for node in tree.tags("input"):
        kind = (node.attributes.get("type") or "").strip(_SPACE).lower()
        if kind == "image" and (src := (node.attributes.get("src") or "").strip(_SPACE)):
            raw.append(src)
    css = [node.text(deep=True) for node in tree.tags("style")]
    css += [
        style
        for node in tree.css("[style]")
        if (style := node.attributes.get("style")) and "url" in style.lower()
    ]
    if any("url" in text.lower() or "@import" in text.lower() for text in css):
        from ._css import css_urls  # (tinycss2: only for a page whose CSS names a URL)

        for text in css:
            raw += css_urls(text)
    raw = [href for href in raw if not href.startswith("#")]
    urls = joins.join_each(base, raw) if joins is not None else [join(base, h) for h in raw]
    return list(dict.fromkeys(url for url in urls if url is not None))
