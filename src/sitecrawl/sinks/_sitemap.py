"""Sitemap files (sitemaps.org protocol 0.9): ``<urlset>`` documents split at 50,000 URLs or
50 MB, and a ``<sitemapindex>`` naming them when there is more than one.

:func:`sitemap_documents` is pure (entries -> documents); :func:`write_sitemaps` writes them all
or none: every file goes to a temporary file first (:class:`~sitecrawl.sinks.Replacement`),
and they are renamed into place only once each is whole, the index last. Which pages a sitemap
lists is the audit's (:func:`sitecrawl.audit.sitemap_entry`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from xml.sax.saxutils import escape

from ._atomic import Replacement

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: The protocol's limits for one file: URLs, and bytes uncompressed.
MAX_URLS = 50_000
MAX_BYTES = 50 * 1024 * 1024
_HEAD = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NAMESPACE}">\n'.encode()
_TAIL = b"</urlset>\n"


def _entry(url: str, lastmod: str | None) -> bytes:
    modified = "" if lastmod is None else f"<lastmod>{lastmod}</lastmod>"
    return f"<url><loc>{escape(url)}</loc>{modified}</url>\n".encode()


def sitemap_documents(
    entries: Iterable[tuple[str, str | None]],
    *,
    max_urls: int = MAX_URLS,
    max_bytes: int = MAX_BYTES,
) -> list[bytes]:
    """``<urlset>`` documents of ``(url, lastmod)`` entries, in order, each holding at most
    ``max_urls`` URLs and ``max_bytes`` bytes (an entry that alone would pass the bytes is
    left out: no URL is that long). No entries: one empty ``<urlset>``."""
    documents: list[bytes] = []
    parts: list[bytes] = []
    size = len(_HEAD) + len(_TAIL)
    for url, lastmod in entries:
        entry = _entry(url, lastmod)
        if len(_HEAD) + len(entry) + len(_TAIL) > max_bytes:
            continue
        if parts and (len(parts) >= max_urls or size + len(entry) > max_bytes):
            documents.append(b"".join([_HEAD, *parts, _TAIL]))
            parts, size = [], len(_HEAD) + len(_TAIL)
        parts.append(entry)
        size += len(entry)
    if parts or not documents:
        documents.append(b"".join([_HEAD, *parts, _TAIL]))
    return documents


def sitemap_index(locations: Iterable[str]) -> bytes:
    """A ``<sitemapindex>`` naming each sitemap URL."""
    items = "".join(f"<sitemap><loc>{escape(loc)}</loc></sitemap>\n" for loc in locations)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NAMESPACE}">\n'
        f"{items}</sitemapindex>\n"
    ).encode()


def part_name(path: str, number: int) -> str:
    """The file of the ``number``-th sitemap beside the index ``path``:
    ``sitemap.xml`` -> ``sitemap-1.xml``."""
    stem, ext = os.path.splitext(path)
    return f"{stem}-{number}{ext or '.xml'}"


def write_sitemaps(
    entries: Iterable[tuple[str, str | None]],
    path: str,
    *,
    base_url: str,
    max_urls: int = MAX_URLS,
    max_bytes: int = MAX_BYTES,
) -> list[str]:
    """Write the sitemap of ``entries`` to ``path``: one ``<urlset>`` when it fits, else
    numbered parts beside it (:func:`part_name`) and at ``path`` their index, which names
    them at ``base_url`` (where they will be served: the parts' file names are appended).
    Every file appears whole or not at all. Returns the paths written, the index last."""
    documents = sitemap_documents(entries, max_urls=max_urls, max_bytes=max_bytes)
    files: list[tuple[str, bytes]] = []
    if len(documents) > 1:
        parts = [part_name(path, n) for n in range(1, len(documents) + 1)]
        files = list(zip(parts, documents, strict=True))
        prefix = base_url if base_url.endswith("/") else base_url + "/"
        documents = [sitemap_index(prefix + os.path.basename(part) for part in parts)]
    files.append((path, documents[0]))
    replacements: list[Replacement] = []
    try:
        for name, document in files:
            replacement = Replacement(name)
            replacements.append(replacement)
            with open(replacement.temp, "wb") as out:
                out.write(document)
        for replacement in replacements:
            replacement.commit()
    finally:
        for replacement in replacements:
            replacement.discard()  # those not committed: an error on the way
    return [name for name, _ in files]
