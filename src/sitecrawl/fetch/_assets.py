"""A page's requisites for a web archive (``--archive-assets``): what a replay needs to look
like the site, fetched politely and archived, never parsed nor made page rows.

A requisite is a link of the page (its ``links``, :data:`~sitecrawl.Link`) that the browser
would load with it: ``<img src>`` (not yet its ``srcset`` candidates: the parser does not
make them links), ``<script src>``, ``<link href>`` whose ``rel`` is a stylesheet, an icon,
a preload or a manifest. Each distinct URL in the crawl's scope is fetched once, through the
page's own machinery: robots.txt (a disallowed one is not asked), the host's slot (its delay
and concurrency), retries; the fetcher's recorder archives the exchange (a redirect is
archived as its hop, not followed). CSS ``url()`` in stylesheets is not read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from .._exceptions import FetchError

if TYPE_CHECKING:
    from .._models import Link
    from ._pagejob import PoliteClient

#: ``<link rel>`` values (any of a rel's words) whose target is a requisite.
REQUISITE_RELS = frozenset(
    {"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload", "modulepreload", "manifest"}
)


def requisites(links: Iterable[Link]) -> list[str]:
    """The requisite URLs among a page's ``links``, in order, each once (pure)."""
    found: dict[str, None] = {}
    for url, _text, rel, kind in links:
        wanted = kind in ("img", "script") or (
            kind == "link" and rel is not None and bool(REQUISITE_RELS & set(rel.lower().split()))
        )
        if wanted and url.startswith(("http://", "https://")):
            found.setdefault(url, None)
    return list(found)


class Requisites:
    """Fetches the requisites of each page once (``in_scope``: the crawl's scope test;
    ``allowed``: robots.txt's, the crawl's gate)."""

    def __init__(
        self,
        client: PoliteClient,
        allowed: Callable[[str], Awaitable[bool]],
        in_scope: Callable[[str], bool],
    ) -> None:
        self._client = client
        self._allowed = allowed
        self._in_scope = in_scope
        self._seen: set[str] = set()
        self.fetched = 0  # requisites asked (answered or not)

    async def fetch(self, links: Iterable[Link]) -> None:
        """Fetch the requisites among ``links`` not fetched before (a failure is skipped:
        the page is what the crawl reports on)."""
        for url in requisites(links):
            if url in self._seen or not self._in_scope(url):
                continue
            self._seen.add(url)
            try:
                if not await self._allowed(url):
                    continue
            except FetchError:  # robots.txt unreachable: not asked, as a page would not be
                continue
            self.fetched += 1
            await self._client.get(url, read_any=True)  # archived by the fetcher's recorder
