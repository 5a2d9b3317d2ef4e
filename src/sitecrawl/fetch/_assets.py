"""A page's requisites for a web archive (``--archive-assets``): what a replay needs to look
like the site, fetched politely and archived, never followed as pages nor made page rows.

A requisite is, first, a link of the page (its ``links``, :data:`~sitecrawl.Link`) that the
browser would load with it: ``<img src>``, ``<script src>``, ``<link href>`` whose ``rel`` is
a stylesheet, an icon, a preload or a manifest. Then what the parser reads for an archive
only (:attr:`~sitecrawl.parse.Extracted.requisites`, :mod:`sitecrawl.parse._requisites`): the
candidates of ``<img srcset>``, ``<source srcset>`` (``<picture>``) and ``<link
imagesrcset>``, posters, image inputs, and the ``url()`` and ``@import`` targets of the
page's ``<style>`` blocks and ``style=""`` attributes. Last,
what the stylesheets fetched name (:func:`~sitecrawl.parse.stylesheet_urls`: fonts,
backgrounds, imported stylesheets), resolved against the stylesheet's own URL; an imported
stylesheet is read in turn, down to :data:`MAX_CSS_DEPTH` stylesheets deep.

Each distinct URL in the crawl's scope is fetched once a crawl, through the page's own
machinery: robots.txt (a disallowed one is not asked), the host's slot (its delay and
concurrency), retries; the fetcher's recorder archives the exchange (a redirect is archived
as its hop, not followed). ``data:`` URLs and other schemes are never asked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

from .._exceptions import FetchError
from .._urls import join
from ._fetcher import Response

if TYPE_CHECKING:
    from .._models import Link
    from ._pagejob import PoliteClient

#: ``<link rel>`` values (any of a rel's words) whose target is a requisite.
REQUISITE_RELS = frozenset(
    {"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload", "modulepreload", "manifest"}
)
#: How deep stylesheets are read: one the page names is 1, one it imports 2, ... What a
#: stylesheet this deep names is fetched, not read.
MAX_CSS_DEPTH = 3
#: The ``Content-Type`` of a stylesheet to read.
CSS_TYPE = "text/css"


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


def stylesheet_requisites(response: Response) -> list[str]:
    """The absolute http(s) URLs a fetched stylesheet names, each once, in order (none when
    the response is not a complete ``text/css`` body) (pure)."""
    if (
        response.status != 200
        or response.content_type != CSS_TYPE
        or response.body is None
        or response.truncated
    ):
        return []
    from ..parse import stylesheet_urls  # (tinycss2: only in a crawl that reads stylesheets)

    found: dict[str, None] = {}
    for href in stylesheet_urls(response.body, response.charset):
        if not href.startswith("#") and (url := join(response.url, href)):
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

    async def fetch(self, links: Iterable[Link], more: Iterable[str] = ()) -> None:
        """Fetch the requisites among ``links``, and ``more`` (the parser's
        :attr:`~sitecrawl.parse.Extracted.requisites`: absolute URLs), not fetched before,
        and what the stylesheets among them name (a failure is skipped: the page is what
        the crawl reports on)."""
        await self._fetch_each([*requisites(links), *more], 1)

    async def _fetch_each(self, urls: Iterable[str], depth: int) -> None:
        """Fetch each new URL of ``urls``; read a stylesheet among them if it is at most
        :data:`MAX_CSS_DEPTH` deep (``depth``: theirs) and fetch what it names."""
        for url in urls:
            if url in self._seen or not self._in_scope(url):
                continue
            self._seen.add(url)
            try:
                if not await self._allowed(url):
                    continue
            except FetchError:  # robots.txt unreachable: not asked, as a page would not be
                continue
            self.fetched += 1
            result, _attempts = await self._client.get(url, read_any=True)  # archived
            if depth > MAX_CSS_DEPTH or not isinstance(result, Response):
                continue
            if named := stylesheet_requisites(result):
                await self._fetch_each(named, depth + 1)
