"""AsyncCrawler: a fixed pool of workers over a frontier. It orchestrates; it computes nothing.

Before the workers start, the start host's robots.txt is read and its sitemaps seed the
frontier. Each worker then loops: lease a request from the frontier, run its lifecycle
(:class:`PageJob`: robots check, polite fetch with retries through the host's slot, record;
at most ``max_concurrency`` requests in flight), hand the page to the hooks, queue the page's
in-scope links (bounded against link traps), end the lease. The crawl ends when the frontier
is empty and no worker holds a lease, when ``max_pages`` pages have been fetched, or when
:meth:`stop` is called.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import TYPE_CHECKING, Any

import aiohttp

from ._config import CrawlConfig, MarkdownScope
from ._config_requests import Requests
from ._course import KEYWORDS, CourseAPI, config_from_keywords
from ._driver import CrawlDriver
from ._exceptions import BlockedAddress, ConfigError
from ._log import logger, request_line
from ._models import CrawlStats, Page, Request
from ._urls import split_host, url_key
from .control import CrawlScope, LinkRules, LinkTargets, TrapGuard, default_scope
from .fetch import FetchStack, PageJob, Recorder, Requisites, RobotsRules, merge_alternates
from .frontier import (
    Frontier,
    MemoryFrontier,
    SqliteFrontier,
    encode,
    given_rules,
    origin_of,
    take_or_refuse,
)
from .parse import Extraction, Parser
from .throttle import Throttle

if TYPE_CHECKING:
    from .render import Renderer

#: ``on_page`` / ``on_error``: a function, or an ``async def`` (awaited before the worker
#: goes on: a slow hook slows the crawl instead of piling up pages).
PageHook = Callable[[Page], Awaitable[None] | None]
#: Sitemaps are read from the origins of the first start URLs, at most this many; and a start
#: URL's redirect moves the scope only when there are at most this many (not for a list).
MAX_SITEMAP_ORIGINS = 10


class AsyncCrawler(CourseAPI, CrawlDriver):
    """Crawl one site. ``async with AsyncCrawler(url) as crawler: pages = await crawler.crawl()``.

    The crawl's settings come from ``config`` or, without one, from the keywords
    (``max_concurrency``, ``max_pages``, ``max_depth``, ``subdomains``, ``user_agent``,
    ``timeout``, ``ca_bundle``: a PEM file of the CAs trusted for https://, ``processes``,
    ``link_details``, ``requests``: headers, cookies, auth and
    proxy, a :class:`~sitecrawl.Requests`; ``markdown``, ``markdown_scope``: each HTML
    page's content as Markdown, ``Page.markdown``); passing ``config`` with any of those set
    (or with another ``base_url``) raises :class:`ConfigError`. ``state`` (a file path) keeps
    the frontier and every page in SQLite, so that running the same crawl again resumes it;
    by default everything lives in memory. Either way ``page_data`` holds this run's pages
    (``keep_pages=False``: none). ``throttle`` replaces the in-process per-host slots (a crawl
    shared by many processes passes a ``RedisThrottle``); ``recorder`` gets every exchange.

    The course's attributes are kept (:class:`~sitecrawl._course.CourseAPI`): ``base_url``,
    ``base_domain``, ``page_data`` (normalized URL -> page dict), ``lock``,
    ``max_concurrency``, ``semaphore`` and ``session`` (the aiohttp session, open inside
    ``async with``). :meth:`run` crawls into sinks (:mod:`._driver`: the commands' driver).
    """

    def __init__(
        self,
        base_url: str,
        max_concurrency: int = 8,
        max_pages: int | None = None,
        *,
        max_depth: int | None = None,
        subdomains: bool = False,
        user_agent: str | None = None,
        ca_bundle: str | None = None,
        timeout: float | None = None,
        processes: int = 1,
        config: CrawlConfig | None = None,
        frontier: Frontier | None = None,
        on_page: PageHook | None = None,
        on_error: PageHook | None = None,
        keep_pages: bool = True,
        state: str | os.PathLike[str] | None = None,
        link_details: bool | None = None,
        throttle: Throttle | None = None,
        requests: Requests | None = None,
        extract: Mapping[str, Any] | None = None,
        markdown: bool = False,
        markdown_scope: MarkdownScope | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        # The setting keywords (declared on the config's fields: KEYWORDS) as given.
        keywords = {name: value for name, value in locals().items() if name in KEYWORDS}
        config = config_from_keywords(base_url, config, keywords)
        self.base_url = config.base_url  # canonical (CrawlConfig)
        starts = list(config.starts)
        self.scope = CrawlScope(starts, config.scope_kind)
        self.link_rules = LinkRules(self.scope, config.rules)
        self.max_concurrency = config.limits.max_concurrency
        if frontier is not None and state is not None:
            raise ConfigError("pass either frontier= or state=, not both")
        if frontier is None:
            frontier = (
                MemoryFrontier()
                if state is None
                else SqliteFrontier(
                    state, base_url=self.base_url, max_pages=config.limits.max_pages
                )
            )
        self.frontier: Frontier = frontier
        assets = config.archive_assets and recorder is not None  # requisites, from links
        if config.link_details is None:  # by default, pages carry their links when stored
            config = replace(config, link_details=frontier.stores_pages or assets)
        self.config = config
        self.stats = CrawlStats(refused=self.link_rules.refused)
        self._parser = Parser(
            config.processes,
            link_details=bool(config.link_details),
            extraction=Extraction(config.extract) if config.extract else None,
            markdown=config.markdown_scope if config.markdown else None,
            structured_data=config.structured_data,
            near_duplicates=config.near_duplicates,
            requisites=assets,
        )
        self._resources = contextlib.AsyncExitStack()
        # Credentials go to the start URLs' scope: not where a start URL redirects off-site.
        self._trusted = CrawlScope(starts, config.scope_kind)
        self._stack = FetchStack(
            config, throttle=throttle, on_rules=self._on_robots, scope=self._trusted
        )
        self._stack.fetcher.recorder = recorder  # every HTTP exchange, for an archive (WARC)
        self.throttle = self._stack.throttle
        self.robots = self._stack.robots
        self._client = self._stack.client
        parse, read_pdf = self._parser.parse, self._parser.read_pdf
        self._job = PageJob(self._client, self._stack.gate, self.scope, config, parse, read_pdf)
        requisites = Requisites(self._client, self._stack.gate.allowed, self.scope.contains)
        self._requisites = requisites if assets else None  # --archive-assets, archived
        self._job.unconverted = self.stats.unconverted
        self._job.notes = self.stats.notes
        self._renderer: Renderer | None = None
        #: Keys of the URLs the sitemaps list -> the hreflang alternates they name there.
        self._sitemap_keys: dict[str, list[tuple[str, str]]] = {}
        self._targets = self._link_targets()
        self._on_page = on_page
        self._on_error = on_error
        self._started = 0  # pages whose fetch has begun (the max_pages budget)
        self._in_flight = 0
        self._asking = 0  # frontier.next() calls not yet returned (counted in _started)
        self._answered = asyncio.Event()  # set when a next() call returns, if ...
        self._capped = 0  # ... workers wait at the max_pages cap for the calls asking
        self._stopping = False
        self.interrupted = False
        self._wake = asyncio.Event()
        self._init_course(keep_pages=keep_pages)

    # -- lifetime ---------------------------------------------------------------------------

    @property
    def session(self) -> aiohttp.ClientSession | None:
        return self._stack.fetcher.session

    async def __aenter__(self) -> AsyncCrawler:
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(self.frontier)
            await self._take_stored()
            await stack.enter_async_context(self._stack)
            await stack.enter_async_context(self._parser)
            if self.config.render.mode != "never":
                from .render import Renderer

                renderer = Renderer(
                    self.config,
                    self._client,
                    self._stack.gate.allowed,
                    self.scope,
                    self._parser.parse,
                    self.stats.rendered,
                )
                self._job.render = self._renderer = renderer
                await stack.enter_async_context(renderer)
            self._resources = stack.pop_all()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._resources.__aexit__(exc_type, exc, tb)

    def _link_targets(self) -> LinkTargets:
        limits = self.config.limits
        guard = TrapGuard(
            max_url_length=limits.max_url_length,
            max_query_variants=limits.max_query_variants,
            max_pattern_pages=limits.max_pattern_pages,
        )
        return LinkTargets(self.link_rules, guard)

    async def _take_stored(self) -> None:
        """A durable frontier's stored crawl: a new one stores this crawl's config; a resumed
        or joined one is taken or refused (:func:`~.frontier._stored.take_or_refuse`: the
        same aim, or none given and the stored one taken; the credentials given again)."""
        frontier = self.frontier
        if frontier.config is None:
            if frontier.stores_pages:
                await frontier.save_config(encode(self.config))
            return
        where = str(getattr(frontier, "path", None) or getattr(frontier, "crawl_id", ""))
        resumed = take_or_refuse(frontier.config, self.config, where)
        config, self.config = self.config, resumed.config
        if config.extract != self.config.extract:
            self._parser.extraction = Extraction(self.config.extract)
        self._parser.markdown = self.config.markdown_scope if self.config.markdown else None
        self._parser.near_duplicates = self.config.near_duplicates
        if given_rules(config) != given_rules(self.config):
            self.scope.reaim(self.config.scope_kind)
            self._trusted.reaim(self.config.scope_kind)
            self.link_rules = LinkRules(self.scope, self.config.rules)
            self.stats.refused = self.link_rules.refused
            self._targets = self._link_targets()
        for what, value in resumed.taken:
            self.stats.notes.append(f"resumed with the {what} this crawl began with: {value}")

    def stop(self) -> None:
        """Stop taking new URLs (Ctrl-C); requests in flight finish and are recorded (a
        page's parse gets a short deadline: :meth:`~.parse._pool.Parser.stop`; renders in
        flight are cut short: read as they are)."""
        self.interrupted = True
        self._parser.stop()
        if self._renderer is not None:
            self._renderer.stop()
        self._halt()

    @property
    def stopped(self) -> bool:
        """True once the crawl takes no new URLs: stopped, or ``max_pages`` reached."""
        return self._stopping

    def _halt(self) -> None:
        self._stopping = True
        self._notify()

    # -- the engine -------------------------------------------------------------------------

    async def crawl(self) -> dict[str, dict[str, Any]]:
        """Crawl the site from ``base_url``; return ``page_data``."""
        if self.session is None:
            raise RuntimeError("use 'async with AsyncCrawler(...)' before crawl()")
        self._notify()
        # Start URLs that redirected in an earlier run, or for another worker: scope as then.
        redirected = (self.frontier.options or {}).get("start_redirects", {})
        for start, final in redirected.items():
            self._retarget(start, final)
        self.stats.scope = self.scope.describe()
        if self.config.limits.max_depth == 0:
            self.stats.scope += " (depth 0: nothing followed)"
        # Start URLs (depth 0) are fetched whatever the rules say, in order.
        starts = self.scope.start_urls
        await self.frontier.add([Request(url=url, key=url_key(url)) for url in starts])
        if self.config.politeness.sitemaps and self.config.limits.max_depth != 0:
            await self._seed_sitemaps()
        # A resumed crawl: max_pages counts the pages of earlier runs too.
        self.stats.resumed = self._started = (await self.frontier.stats()).done
        try:
            async with self.frontier.working(), asyncio.TaskGroup() as workers:
                for _ in range(self.max_concurrency):
                    workers.create_task(self._worker())
            if not self.interrupted:
                cut = not await self.frontier.is_finished()
                await self.frontier.finish(self.config.limits.max_pages if cut else None)
        finally:
            self.stats.finished = time.monotonic()
        return self.page_data

    def _notify(self) -> None:
        """Wake idle workers: something was queued, or the last lease ended."""
        self._wake.set()
        self._wake = asyncio.Event()

    async def _worker(self) -> None:
        frontier = self.frontier
        max_pages = self.config.limits.max_pages
        while not self._stopping:
            wake = self._wake
            if max_pages is not None and self._started >= max_pages:
                if not self._asking:  # the cap is reached: every lease asked for was given
                    self._halt()
                    return
                self._capped += 1  # another worker's next() may yet come back empty
                try:
                    await self._answered.wait()
                finally:
                    self._capped -= 1
                continue
            self._started += 1
            self._asking += 1
            try:
                request = await frontier.next()
            finally:
                self._asking -= 1
                if self._capped:  # the workers waiting at the cap look again
                    self._answered.set()
                    self._answered = asyncio.Event()
            if request is None:
                self._started -= 1
                if self._in_flight == 0 and await frontier.is_finished():
                    self._notify()
                    return
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), frontier.poll_interval)
                continue
            self._in_flight += 1
            page = None  # stays None when the fetch is abandoned: the frontier requeues it
            links: list[Request] = []  # the page's links to queue as it is done
            try:
                page = await self._crawl_request(request, links)
            finally:
                self._in_flight -= 1
                if await frontier.complete(request, page, links) or self._in_flight == 0:
                    self._notify()

    async def _crawl_request(self, request: Request, queue: list[Request] | None = None) -> Page:
        """Fetch and record ``request``; its links to queue go to ``queue`` (queued with the
        lease's end), or without one, to the frontier now."""
        previous = None
        if self.config.politeness.revalidate:
            previous = await self.frontier.previous_page(request.key)
        page, links, requisites = await self._job.run(request, previous)
        page.in_sitemap = request.key in self._sitemap_keys
        if alternates := self._sitemap_keys.get(request.key):  # the sitemap's hreflang
            page.hreflang = merge_alternates(page.hreflang, alternates)
        if (
            request.depth == 0
            and page.redirects
            and page.final_url
            and page.error_kind != BlockedAddress.kind  # refused there: no new scope
        ):
            await self._start_redirected(request.url, page.final_url)
        if links:
            batch = self._to_queue(links, request)
            if queue is not None:
                queue += batch
            elif batch and await self.frontier.add(batch):
                self._notify()
        if self._requisites is not None:  # archived before the page is done
            await self._requisites.fetch(page.links, requisites)
        await self._record(request, page)
        return page

    async def _start_redirected(self, start: str, final: str) -> None:
        """A start URL redirected (``http://a.test`` -> ``https://www.b.test/``): the final
        URL's site becomes the scope in its place, said in the summary; a new origin's
        sitemaps are read too. (Not for a list: its scope matters only when followed, and
        then a list URL that redirects is one start among many.)"""
        if self.config.limits.max_depth == 0:
            return
        await self.frontier.claim(url_key(final))  # fetched: its record is the start's
        starts = self.scope.start_urls
        if len(starts) > MAX_SITEMAP_ORIGINS:
            return
        if start not in starts:
            return
        was = self.scope.describe()
        self._retarget(start, final)
        self.stats.scope = self.scope.describe()
        if self.stats.scope == was:
            return
        # Stored, so that a resumed crawl and the other workers of a shared one scope alike.
        options = dict(self.frontier.options or {})
        options["start_redirects"] = {**options.get("start_redirects", {}), start: final}
        await self.frontier.save_options(options)
        self.stats.notes.append(
            f"start URL {start} redirected to {final}: the scope is now {self.stats.scope}"
        )
        origin = origin_of(final)
        if origin != origin_of(start) and self.config.politeness.sitemaps:
            await self._seed_sitemaps_of(origin)

    def _retarget(self, start: str, final: str) -> None:
        kind = None
        if self.config.rules.scope is None and not self.config.subdomains:
            kind = default_scope(final)  # /docs -> /docs/: a folder after all
        self.scope.retarget(start, final, kind=kind)

    async def _seed_sitemaps(self) -> None:
        """Queue the URLs of the start hosts' sitemaps (robots.txt ``Sitemap:`` lines, else
        ``/sitemap.xml``) that are in scope and pass the rules (rewritten first), at depth 1."""
        origins = dict.fromkeys(origin_of(url) for url in self.scope.start_urls)
        for origin in list(origins)[:MAX_SITEMAP_ORIGINS]:
            await self._seed_sitemaps_of(origin)

    async def _seed_sitemaps_of(self, origin: str) -> None:
        max_depth = self.config.limits.max_depth
        found = await self._stack.sitemap_urls(origin, self.scope)
        self.stats.notes += [f"sitemap {error}" for error in found.errors]
        self.stats.sitemap_urls += len(found.urls)
        rules = self.link_rules
        urls = found.urls
        if rules.rules.rewrites:
            urls = [url for url in map(rules.rewrite, urls) if url is not None]
        self._sitemap_keys.update((url_key(url), found.alternates.get(url, [])) for url in urls)
        if max_depth is not None and max_depth < 1:
            return
        if rules.filters:
            urls = [url for url in urls if rules.allows(url)]
        batch = [
            Request(url=url, key=url_key(url), depth=1, referrer=origin)
            for url in urls
            if len(url) <= self.config.limits.max_url_length
        ]
        if batch and await self.frontier.add(batch):
            self._notify()

    def _on_robots(self, origin: str, rules: RobotsRules) -> None:
        """Note a robots.txt ``Crawl-delay`` capped by ``--max-crawl-delay`` (the fetch stack
        has applied it to the host's slot)."""
        slot = self.throttle.slot(split_host(origin))
        if slot.crawl_delay_capped_from is not None:
            note = (
                f"Crawl-delay {slot.crawl_delay_capped_from:g} s of {slot.host} capped to "
                f"{slot.crawl_delay:g} s (--max-crawl-delay)"
            )
            if note not in self.stats.notes:
                self.stats.notes.append(note)
                logger.warning("%s", note)

    def _to_queue(self, links: list[str], parent: Request) -> list[Request]:
        """The requests of a page's links to queue (in scope, within limits, not traps)."""
        depth = parent.depth + 1
        limits = self.config.limits
        if limits.max_depth is not None and depth > limits.max_depth:
            return []
        referrer = parent.url
        targets = self._targets
        batch = [
            Request(url=link, key=key, depth=depth, referrer=referrer)
            for link, key in targets.keyed(links, depth)
        ]
        self.stats.dropped_links = targets.rejected
        if targets.trapped:
            self._note_traps(targets.trapped)
        return batch

    def _note_traps(self, trapped: list[str]) -> None:
        notes = self.stats.notes
        noted = sum(note.startswith("path trap: ") for note in notes)
        limit = self.config.limits.max_pattern_pages or 0
        for trap in trapped[noted:]:
            why = "" if trap.startswith("looping") else f" past {limit:,} pages"
            notes.append(f"path trap: links to {trap}{why} not followed (--max-pattern-pages)")
            logger.warning("%s", notes[-1])

    async def _record(self, request: Request, page: Page) -> None:
        if logger.isEnabledFor(logging.DEBUG):  # one record per page; -v prints its line
            error = page.error or "ok"
            line = {"request_line": request_line(page)}
            logger.debug("page %s %s: %s", page.status, page.url, error, extra=line)
        self.stats.count(page)
        self.stats.retries = self._client.retries
        self._keep(request.key, page)
        if page.error is not None and self._on_error is not None:
            await _call(self._on_error, page)
        for sink in self.sinks:  # run()'s
            sink.write(page)
        if self._on_page is not None:
            await _call(self._on_page, page)


async def _call(hook: PageHook, page: Page) -> None:
    """Call a hook; await what it returns when that is awaitable (an ``async def``, or any
    callable returning a coroutine: a partial, an object with an async ``__call__``)."""
    result = hook(page)
    if result is not None and inspect.isawaitable(result):
        await result
