"""One crawl spread over several Redis instances (shards), by host.

:class:`RedisShards` is a :class:`~._base.Frontier` over one :class:`~._redis.RedisFrontier`
per Redis URL, each a whole crawl of its own in its instance (config hash and epoch, counts,
queue, leases, seen set, pages, workers). A request goes to the shard of its host
(``host[:port]``, the politeness slot's name): :func:`shard_of` is a stable hash, the same in
every process, so a host's queue, dedupe (its URLs' seen set) and politeness
(:class:`~sitecrawl.throttle.RedisThrottle` asks :meth:`RedisShards.shard_for`) all live in
one instance and each of its scripts stays atomic there.

Shard 0 is the coordinator: the crawl's stored config, options and meta are read from it
(they are written to every shard, so each holds the whole crawl's identity), the workers'
liveness is its count, and ``status`` and ``export`` name it first. Counters and the end of
the crawl are the sum of every shard's: the crawl is finished when no shard has anything
queued or leased. Each shard records its place (``shard`` = ``i/n`` in its config hash):
joining with another list of URLs, or in another order, is refused, since it would send a
host's URLs to the wrong instance. A page budget (``max_pages``) counts in each shard
alone, so it needs a single Redis: sharded crawls refuse one.

Each shard keeps its own guard: a shard restarted empty or flushed, or unreachable past the
reconnect window, loses the crawl for every worker (every later call raises StateError),
as a single Redis does; a shard restarted with its data (AOF) is reconnected to. A page's
links on other shards are queued before its own shard records it done (a worker killed in
between leaves the lease to expire, and the page is crawled again: its links are deduped).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Unpack

from .._exceptions import ConfigError
from .._models import Page, Request
from ._base import Frontier, FrontierStats
from ._redis import CrawlStatus, RedisFrontier
from ._redis_crawl import CrawlArgs


def shard_of(host: str, shards: int) -> int:
    """The shard of ``host`` (``host[:port]``) among ``shards``: stable across processes."""
    digest = hashlib.blake2b(host.lower().encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def _host_of_key(key: str) -> str:
    """The ``host[:port]`` of a dedupe key (:func:`~sitecrawl._urls.url_key`)."""
    return key.split("/", 1)[0]


class RedisShards(Frontier):
    """The crawl ``crawl_id`` spread over the Redis instances at ``urls`` (in this order,
    the same for every process), by host; options as :class:`RedisFrontier`'s (a page
    budget excepted)."""

    stores_pages = True
    poll_interval = 0.1

    def __init__(
        self,
        urls: Sequence[str],
        *,
        lease_ttl: float = 30.0,
        max_pages: int | None = None,
        lease_batch: int = 8,
        **crawl: Unpack[CrawlArgs],
    ) -> None:
        if len(urls) < 2:
            raise ConfigError("RedisShards needs at least two Redis URLs (else: RedisFrontier)")
        if len(set(urls)) != len(urls):
            raise ConfigError("the same Redis URL is given twice")
        n = len(urls)
        self.shards = [
            RedisFrontier(url, lease_ttl=lease_ttl, lease_batch=lease_batch, **crawl)
            for url in urls
        ]
        for i, shard in enumerate(self.shards):
            shard.shard = f"{i}/{n}"
        self.urls = list(urls)
        self.url = ",".join(urls)  # as the CLI takes them (messages redact each)
        self.crawl_id = self.shards[0].crawl_id
        self.max_pages = max_pages
        self._owner: dict[str, RedisFrontier] = {}  # key handed out -> the shard it is from
        self._turn = 0  # the shard next() asks first
        self._empty_until = [0.0] * n  # a shard that had nothing queued is asked again then
        self._cursors: dict[int, list[int]] = {}  # pages given so far -> each shard's count

    # -- the crawl, as a RedisFrontier has it -----------------------------------------------

    @property
    def coordinator(self) -> RedisFrontier:
        return self.shards[0]

    @property
    def base_url(self) -> str | None:
        return self.coordinator.base_url

    @base_url.setter
    def base_url(self, value: str | None) -> None:
        self.coordinator.base_url = value

    @property
    def config(self) -> dict[str, Any] | None:  # type: ignore[override]
        return self.coordinator.config

    @property
    def options(self) -> dict[str, Any] | None:  # type: ignore[override]
        return self.coordinator.options

    @property
    def token(self) -> str:
        return self.coordinator.token

    @property
    def lost(self) -> str | None:
        return next((s.lost for s in self.shards if s.lost is not None), None)

    @property
    def lease_ttl(self) -> float:
        return self.coordinator.lease_ttl

    @lease_ttl.setter
    def lease_ttl(self, value: float) -> None:
        for shard in self.shards:
            shard.lease_ttl = value

    @property
    def lease_batch(self) -> int:
        return self.coordinator.lease_batch

    @lease_batch.setter
    def lease_batch(self, value: int) -> None:
        for shard in self.shards:
            shard.lease_batch = value

    @property
    def max_pages(self) -> int | None:
        return None

    @max_pages.setter
    def max_pages(self, value: int | None) -> None:
        if value is not None:
            raise ConfigError(
                "a page budget (--max-pages) needs a single Redis: it is counted in one"
            )

    def shard_for(self, host: str) -> RedisFrontier:
        """The shard holding ``host``'s requests and politeness."""
        return self.shards[shard_of(host, len(self.shards))]

    def check(self) -> None:
        for shard in self.shards:
            shard.check()

    # -- lifetime ---------------------------------------------------------------------------

    async def open(self) -> None:
        opened: list[RedisFrontier] = []
        try:
            for shard in self.shards:  # the coordinator first: it creates the crawl's config
                await shard.open()
                opened.append(shard)
        except BaseException:
            for shard in reversed(opened):
                await shard.close()
            raise

    async def close(self) -> None:
        errors: list[BaseException] = []
        for shard in self.shards:
            try:
                await shard.close()
            except Exception as exc:  # close every shard, then say what failed
                errors.append(exc)
        if errors:
            raise errors[0]

    @contextlib.asynccontextmanager
    async def working(self) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for shard in self.shards:
                await stack.enter_async_context(shard.working())
            yield

    async def save_config(self, config: dict[str, Any]) -> None:
        await asyncio.gather(*(shard.save_config(config) for shard in self.shards))

    async def save_options(self, options: dict[str, Any]) -> None:
        await asyncio.gather(*(shard.save_options(options) for shard in self.shards))

    async def drop(self) -> int:
        return sum(await asyncio.gather(*(shard.drop() for shard in self.shards)))

    # -- the contract -----------------------------------------------------------------------

    def _split(self, requests: Sequence[Request]) -> dict[int, list[Request]]:
        n = len(self.shards)
        parts: dict[int, list[Request]] = {}
        for r in requests:
            parts.setdefault(shard_of(_host_of_key(r.key), n), []).append(r)
        return parts

    async def add(self, requests: Sequence[Request]) -> int:
        parts = self._split(requests)
        added = await asyncio.gather(*(self.shards[i].add(part) for i, part in parts.items()))
        for i, n in zip(parts, added, strict=True):
            if n:  # queued there: next() asks it again at once
                self._empty_until[i] = 0.0
        return sum(added)

    async def claim(self, key: str) -> bool:
        return await self.shard_for(_host_of_key(key)).claim(key)

    async def next(self) -> Request | None:
        """A lease from the next shard in turn that has one (each call starts at the next
        shard, so the shards' hosts are crawled side by side); a shard that had nothing is
        skipped for ``poll_interval``, unless this process queued something there since."""
        self.check()
        n = len(self.shards)
        now = time.monotonic()
        start = self._turn
        self._turn = (start + 1) % n
        for step in range(n):
            i = (start + step) % n
            if self._empty_until[i] > now:  # nothing there lately: other processes may add
                continue
            shard = self.shards[i]
            request = await shard.next()
            if request is not None:
                self._owner[request.key] = shard
                return request
            self._empty_until[i] = now + self.poll_interval
        return None

    async def mark_done(self, request: Request, page: Page | None = None) -> None:
        await self.complete(request, page)

    async def complete(
        self, request: Request, page: Page | None, links: Sequence[Request] = ()
    ) -> int:
        """The links of other shards are queued first, then the page is done in its own
        shard with its links there (one script, as with a single Redis)."""
        shard = self._owner[request.key]
        own: list[Request] = []
        others: dict[int, list[Request]] = {}
        for i, part in self._split(links).items():
            if self.shards[i] is shard:
                own = part
            else:
                others[i] = part
        added = 0
        if others:
            counts = await asyncio.gather(*(self.shards[i].add(p) for i, p in others.items()))
            for i, n in zip(others, counts, strict=True):
                if n:
                    self._empty_until[i] = 0.0
            added = sum(counts)
        queued = await shard.complete(request, page, own)
        if queued or page is None:  # links queued, or the request back in the queue
            self._empty_until[self.shards.index(shard)] = 0.0
        added += queued
        del self._owner[request.key]
        return added

    async def is_finished(self) -> bool:
        return (await self.status()).finished

    async def stats(self) -> FrontierStats:
        parts = await asyncio.gather(*(shard.stats() for shard in self.shards))
        return FrontierStats(
            seen=sum(p.seen for p in parts),
            queued=sum(p.queued for p in parts),
            in_flight=sum(p.in_flight for p in parts),
            done=sum(p.done for p in parts),
        )

    # -- shared state -----------------------------------------------------------------------

    async def status(self) -> CrawlStatus:
        """The whole crawl's counts: every shard's summed; workers alive as the coordinator
        counts them (each worker registers in every shard); finished when every shard is."""
        parts = await asyncio.gather(*(shard.status() for shard in self.shards))
        return CrawlStatus(
            seen=sum(p.seen for p in parts),
            queued=sum(p.queued for p in parts),
            in_flight=sum(p.in_flight for p in parts),
            done=sum(p.done for p in parts),
            errors=sum(p.errors for p in parts),
            reclaimed=sum(p.reclaimed for p in parts),
            workers=parts[0].workers,
            finished=all(p.finished for p in parts),
        )

    async def pages(self, batch: int = 200, *, start: int = 0) -> AsyncIterator[Page]:
        """Every stored page from the ``start``-th on, once each: each shard's in its
        completion order, the shards one after the other. ``start`` counts the pages given
        by earlier calls (a follower's cursor): where each shard stood is remembered."""
        cursor = self._cursors.get(start) if start else [0] * len(self.shards)
        offsets = None if cursor is None else list(cursor)
        if offsets is None:  # not a cursor of ours: count from the beginning
            offsets = [0] * len(self.shards)
            skip = start
        else:
            skip = 0
        total = start - skip
        for i, shard in enumerate(self.shards):
            async for page in shard.pages(batch, start=offsets[i]):
                offsets[i] += 1
                total += 1
                if skip:
                    skip -= 1
                    continue
                yield page
        self._cursors = {total: offsets}

    def read_pages(self) -> AsyncIterator[Page]:
        return self.pages()

    async def read_meta(self) -> dict[str, str]:
        return await self.coordinator.read_meta()

    async def crawl_seconds(self) -> float | None:
        return None


#: A crawl kept in Redis: one instance, or several (shards).
SharedFrontier = RedisFrontier | RedisShards
