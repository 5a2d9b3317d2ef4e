"""hreflang annotations outside the HTML: the HTTP ``Link`` header's
``<URL>; rel="alternate"; hreflang="de"`` entries, and a sitemap's ``<xhtml:link
rel="alternate" hreflang=... href=...>`` of each ``<url>`` (read by :mod:`._sitemaps`). Pure.

A page's :attr:`~sitecrawl.Page.hreflang` is every source together, the ``<link>`` tags'
first: :func:`merge_alternates` adds the pairs another source gives that the page lacks, so
the hreflang checks (:mod:`sitecrawl.audit._hreflang`) judge them all as one set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .._urls import join

# One entry: <URI> and its parameters, up to the comma that ends it (a URI may hold commas).
_ENTRY = re.compile(r'<([^>]*)>((?:\s*;\s*[^;,="]+(?:=\s*(?:"[^"]*"|[^;,]*))?)*)')
_PARAM = re.compile(r';\s*([^;,="\s]+)\s*(?:=\s*(?:"([^"]*)"|([^;,]*)))?')


def link_alternates(header: str | None, base: str) -> list[tuple[str, str]]:
    """The ``(hreflang, URL)`` pairs of a ``Link`` header's value (several headers joined by
    commas or newlines): entries whose ``rel`` includes ``alternate`` and that have an
    ``hreflang``, URLs resolved against ``base``."""
    if not header or "hreflang" not in header.lower():
        return []
    pairs: list[tuple[str, str]] = []
    for target, params in _ENTRY.findall(header):
        found = {
            name.lower(): (quoted or bare).strip() for name, quoted, bare in _PARAM.findall(params)
        }
        rels = found.get("rel", "").lower().split()
        lang = found.get("hreflang")
        if "alternate" in rels and lang and (url := join(base, target.strip())) is not None:
            pairs.append((lang, url))
    return pairs


def merge_alternates(
    own: list[tuple[str, str]], more: Iterable[tuple[str, str]]
) -> list[tuple[str, str]]:
    """``own`` and the pairs of ``more`` it lacks (hreflang compared without case)."""
    seen = {(lang.lower(), url) for lang, url in own}
    merged = list(own)
    for lang, url in more:
        if (lang.lower(), url) not in seen:
            seen.add((lang.lower(), url))
            merged.append((lang, url))
    return merged
