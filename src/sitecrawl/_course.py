"""The course's API, kept on :class:`~sitecrawl.AsyncCrawler` beside the engine.

The course's crawler was built from a URL and a few keywords and exposed its working parts:
``base_domain``, ``page_data`` (normalized URL -> page dict), ``lock``, ``semaphore``,
:meth:`~CourseAPI.add_page_visit`, :meth:`~CourseAPI.get_html` and
:meth:`~CourseAPI.crawl_page`. :class:`CourseAPI` keeps them, written over the engine's
frontier and page job; :func:`config_from_keywords` turns the course's keywords into the
:class:`CrawlConfig` the engine reads, and refuses keywords that would contradict a config
passed beside them. The course's one-call crawl, :func:`~sitecrawl.crawl_site_async`, is
:mod:`._crawl_site`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from ._config import CrawlConfig
from ._exceptions import ConfigError, HTTPStatusError, NotHTMLError
from ._models import Page, Request
from ._settings import keywords_of
from ._urls import parse_base_url, url_key
from .control import CrawlScope
from .fetch import PageJob
from .frontier import Frontier
from .parse import decode_html

if TYPE_CHECKING:
    pass

#: AsyncCrawler's keywords that build a :class:`CrawlConfig`: keyword -> the path of the
#: setting (or section) it gives, declared on the config's fields (``keyword=``).
KEYWORDS: dict[str, tuple[str, ...]] = keywords_of(CrawlConfig)


@cache
def _default_at(path: tuple[str, ...]) -> Any:
    """The library's default of the setting (or section) at ``path``."""
    value: Any = CrawlConfig(base_url="http://localhost/")
    for name in path:
        value = getattr(value, name)
    return value


def _given(name: str, value: Any) -> bool:
    """Whether a keyword was given: None, an empty mapping and the setting's own default
    leave the config's default in place."""
    if value is None or (isinstance(value, Mapping) and not value):
        return False
    return bool(value != _default_at(KEYWORDS[name]))


def _rules_of(extract: Any) -> tuple[Any, ...]:
    """``extract={name: spec}`` as the config's rules (a bad one: :class:`ConfigError`)."""
    from .parse import Extraction

    return Extraction.from_specs(extract).rules


def config_from_keywords(
    base_url: str, config: CrawlConfig | None, keywords: dict[str, Any]
) -> CrawlConfig:
    """The crawl's config: ``config`` as given, else one built from the keywords.

    Raises :class:`ConfigError` when ``config`` comes with a keyword of :data:`KEYWORDS`
    given (see :func:`_given`), or with a ``base_url`` naming another URL than
    ``config.base_url``: one of the two would be silently ignored."""
    given = {name: value for name, value in keywords.items() if _given(name, value)}
    if config is None:
        if "extract" in given:
            given["extract"] = _rules_of(given["extract"])
        sections: dict[str, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for name, value in given.items():
            path = KEYWORDS[name]
            if len(path) == 1:
                top[path[0]] = value
            else:
                sections.setdefault(path[0], {})[path[1]] = value
        nested = {name: type(_default_at((name,)))(**values) for name, values in sections.items()}
        return CrawlConfig(base_url=base_url, **nested, **top)
    clashes = list(given)
    if clashes:
        raise ConfigError(
            f"config= is given: set {', '.join(clashes)} in the config, not beside it"
        )
    if parse_base_url(base_url) != parse_base_url(config.base_url):
        raise ConfigError(
            f"base_url {base_url!r} is not config.base_url {config.base_url!r}: pass the same URL"
        )
    return config


class CourseAPI:
    """The course's attributes and methods, over the engine's frontier and page job.

    The engine sets what is declared below, calls :meth:`_init_course` once it has, and
    :meth:`_keep` for each page recorded."""

    # Provided by the engine.
    frontier: Frontier
    scope: CrawlScope
    max_concurrency: int
    _job: PageJob

    def _init_course(self, *, keep_pages: bool) -> None:
        self.base_domain = self.scope.site
        self.page_data: dict[str, dict[str, Any]] = {}
        self.lock = asyncio.Lock()
        self.semaphore = asyncio.Semaphore(self.max_concurrency)
        self._keep_pages = keep_pages

    def _keep(self, key: str, page: Page) -> None:
        """Add a recorded page to ``page_data`` (unless ``keep_pages=False``)."""
        if self._keep_pages:
            self.page_data[key] = page.to_dict()

    async def _crawl_request(self, request: Request) -> Page:
        raise NotImplementedError  # the engine's: fetch, record, queue the links

    async def add_page_visit(self, normalized_url: str) -> bool:
        """Mark a page as visited; True only the first time its normalized URL is seen."""
        async with self.lock:
            return await self.frontier.claim(normalized_url)

    async def get_html(self, url: str) -> str:
        """Fetch ``url`` and return its HTML as text, as politely as the crawl: robots.txt
        obeyed, the host's slot (concurrency, delay, backoff) held, retries, in-scope
        redirects followed.

        Raises :class:`HTTPStatusError` on status >= 400, :class:`NotHTMLError` for a non-HTML
        body, :class:`BlockedByRobots` for a disallowed URL, and another :class:`FetchError`
        when no response arrives.
        """
        async with self.semaphore:
            response = await self._job.fetch(self._job.trail(parse_base_url(url)))
        if response.status >= 400:
            raise HTTPStatusError(f"HTTP {response.status}", url=url, status=response.status)
        if response.body is None or not response.is_html:  # (a PDF's body is read)
            raise NotHTMLError(
                f"not HTML: {response.content_type}",
                url=url,
                status=response.status,
                content_type=response.content_type,
            )
        return decode_html(response.body, response.charset)

    async def crawl_page(self, url: str, depth: int = 0) -> Page | None:
        """Fetch one page, record it and queue its in-scope links. None if already visited."""
        href = parse_base_url(url)
        key = url_key(href)
        if not await self.add_page_visit(key):
            return None
        return await self._crawl_request(Request(url=href, key=key, depth=depth))
