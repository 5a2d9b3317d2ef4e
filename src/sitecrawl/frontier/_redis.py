"""Redis frontier and page store: one crawl shared by worker processes on any number of machines.

Every key of crawl ``ID`` starts with ``sitecrawl:{ID}:`` (the braces make it a Redis Cluster hash
tag: one crawl, one slot). Layout::

    config            hash    base_url, config (JSON of the crawl's options), created,
                              sitecrawl, epoch (a random token: the crawl's identity),
                              options (JSON: what the crawl learnt, e.g. start URL redirects)
    counts            hash    seen, done, errors, reclaimed (counters); seq, front (queue order)
    seen:XXXX         set     the seen set, in 16,384 buckets (XXXX = low 14 bits, hex): each
                              member the signed 64-bit int of the 8-byte BLAKE2b of url_key(),
                              so each bucket is an intset, 8 bytes per URL (~10 B with keys)
    queue             zset    "depth\\nkey\\nurl" scored depth * 2**32 + 2**31 + seq: lowest
                              depth first, FIFO within it; released leases go ahead of their
                              depth (2**31 - front)
    leases            zset    the same members, leased, scored by their deadline (ms, Redis TIME)
    owners            hash    leased member -> token of the worker holding it
    pages             list    JSON page records (sitecrawl._pagecodec: the page's fields,
                              links with text, rel and kind included), completion order
    workers           zset    worker token -> liveness deadline (ms): alive while in the future
    host:HOST         hash    shared politeness of HOST (see sitecrawl.throttle._redis)
    host:HOST:tokens  zset    requests in flight on HOST: token -> deadline (ms)
    host:HOST:waiting zset    requests waiting for a full HOST: token -> arrival (ms)

Every multi-key update is one Lua script, so it is atomic, and every script first checks the
crawl's epoch (see :mod:`._redis_crawl`): a Redis restarted empty or flushed, or a crawl
started over, fails every call of every process instead of crawling into an empty crawl.
A lease lasts ``lease_ttl`` seconds
and is renewed by a heartbeat while its page is in flight; a worker that dies stops renewing,
and the next :meth:`~RedisFrontier.next` of any worker puts its expired leases back in the
queue. :meth:`~RedisFrontier.mark_done` stores a page only for the worker that holds the lease,
or when the lease had expired and the request waits in the queue again: a page is stored once.

A lost connection is retried (redis-py's ``Retry`` with exponential backoff, then a reconnect
loop of up to ``reconnect_timeout`` seconds around every call); scripts are idempotent enough
for a retried call to lose nothing. Past that window, once the epoch is gone, or when the
heartbeat fails, the frontier is *lost* (``lost`` says why): every later call raises
StateError at once, so a worker stops instead of crawling unregistered. redis is imported
only by :mod:`._redis_crawl`: without it, opening the frontier says to install the ``[redis]``
extra.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import os
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

from .._exceptions import ConfigError, StateError
from .._json import dumps as _dumps
from .._json import loads as _loads
from .._models import Page, Request
from .._pagecodec import decode, encode
from ._base import Frontier, FrontierStats
from ._redis_crawl import CrawlScript, RedisCrawl
from ._redis_lua import ADD, CLAIM, HEARTBEAT, MARK_DONE, NEXT, PAGES, STATUS

_BUCKET_BITS = 14
_BUCKET_MASK = (1 << _BUCKET_BITS) - 1


@dataclass(frozen=True, slots=True)
class CrawlStatus(FrontierStats):
    """:class:`FrontierStats` of the whole crawl, plus errors, reclaimed leases, workers alive
    and whether it is finished (nothing leased, and nothing queued or the page budget spent)."""

    errors: int = 0
    reclaimed: int = 0
    workers: int = 0
    finished: bool = False


def fingerprint(key: str) -> int:
    """The 8-byte BLAKE2b of a dedupe key, as a signed 64-bit int (an intset member)."""
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class RedisFrontier(RedisCrawl, Frontier):
    """A frontier and page store for crawl ``crawl_id`` in the Redis at ``url``.

    With ``base_url``, opening creates the crawl (storing ``config``, the crawl's options as a
    JSON-able dict, and a new epoch) or joins it when it is a crawl of the same site (``fresh``
    empties it first); without, the crawl must exist (workers, status, export) and
    ``base_url`` and ``config`` are read from it. Problems (unreachable Redis, unknown crawl,
    another site's crawl, and later a lost Redis or crawl) raise :class:`~sitecrawl.StateError`.
    ``max_pages`` is the whole crawl's page budget, held in Redis for every worker: give the
    crawler itself none.
    """

    stores_pages = True
    poll_interval = 0.1

    def __init__(
        self,
        url: str,
        *,
        crawl_id: str,
        base_url: str | None = None,
        config: dict[str, Any] | None = None,
        fresh: bool = False,
        lease_ttl: float = 30.0,
        max_pages: int | None = None,
        reconnect_timeout: float = 60.0,
    ) -> None:
        if lease_ttl <= 0:
            raise ConfigError("lease_ttl must be positive")
        super().__init__(
            url,
            crawl_id=crawl_id,
            base_url=base_url,
            config=config,
            fresh=fresh,
            reconnect_timeout=reconnect_timeout,
        )
        self.lease_ttl = lease_ttl
        self.max_pages = max_pages
        self.token = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._leases: dict[str, str] = {}  # request key -> member
        self._scripts: dict[str, CrawlScript] = {}
        self._heartbeat: asyncio.Task[None] | None = None  # from the first next(): a worker
        self._opened = 0
        k = self.prefix
        self._k_counts, self._k_queue, self._k_leases = k + "counts", k + "queue", k + "leases"
        self._k_owners, self._k_pages, self._k_workers = k + "owners", k + "pages", k + "workers"

    # -- lifetime ---------------------------------------------------------------------------

    async def open(self) -> None:
        self._opened += 1
        if self._opened > 1:  # nested use (the CLI reads the config, then the crawler opens)
            return
        try:
            await self.connect()
        except BaseException:
            self._opened = 0
            raise
        for name, source in (
            ("add", ADD),
            ("claim", CLAIM),
            ("next", NEXT),
            ("mark_done", MARK_DONE),
            ("heartbeat", HEARTBEAT),
            ("status", STATUS),
            ("pages", PAGES),
        ):
            self._scripts[name] = self.script(source)

    async def close(self) -> None:
        self._opened = max(0, self._opened - 1)
        client = self._client
        if client is None or self._opened:
            return
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None
        try:
            if self.lost is None:  # else nothing is left to hand back
                for key in list(self._leases):
                    await self.call(functools.partial(self._end, key, ""))
                await self.call(lambda: client.zrem(self._k_workers, self.token))
        finally:
            await self.disconnect()

    async def _beat(self) -> None:
        ttl = round(self.lease_ttl * 1000)
        members = list(self._leases.values())
        keys = [self._k_leases, self._k_owners, self._k_workers]
        await self._scripts["heartbeat"](keys, [self.token, ttl, *members])

    async def _heartbeats(self) -> None:
        """Renew this worker's leases and liveness every third of the lease time. When that
        fails, the frontier is lost: the worker stops rather than crawl unregistered while
        its leases go to others."""
        try:
            while True:
                await asyncio.sleep(self.lease_ttl / 3)
                await self.call(self._beat)
        except StateError as exc:
            self.lose(str(exc))

    # -- the contract -----------------------------------------------------------------------

    async def add(self, requests: Sequence[Request]) -> int:
        if not requests:
            return 0
        keys = [self._k_counts, self._k_queue]
        args: list[int | str] = []
        for r in requests:
            fp = fingerprint(r.key)
            keys.append(f"{self.prefix}seen:{fp & _BUCKET_MASK:04x}")
            args += [fp, f"{r.depth}\n{r.key}\n{r.url}"]
        script = self._scripts["add"]
        added: int = await self.call(lambda: script(keys, args))
        return added

    async def claim(self, key: str) -> bool:
        fp = fingerprint(key)
        keys = [self._k_counts, f"{self.prefix}seen:{fp & _BUCKET_MASK:04x}"]
        script = self._scripts["claim"]
        return bool(await self.call(lambda: script(keys, [fp])))

    async def next(self) -> Request | None:
        if self._heartbeat is None:  # a worker from now on: alive, renewing its leases
            await self.call(self._beat)
            self._heartbeat = asyncio.create_task(self._heartbeats())
        keys = [self._k_counts, self._k_queue, self._k_leases, self._k_owners]
        args: list[str | int] = [self.token, round(self.lease_ttl * 1000), self.max_pages or 0]
        script = self._scripts["next"]
        member = await self.call(lambda: script(keys, args))
        if member is None:
            return None
        depth, key, url = member.split("\n", 2)
        self._leases[key] = member
        return Request(url=url, key=key, depth=int(depth))

    async def mark_done(self, request: Request, page: Page | None = None) -> None:
        record = "" if page is None else _dumps(encode(page))
        error = page is not None and page.error is not None
        await self.call(lambda: self._end(request.key, record, error=error))

    async def _end(self, key: str, record: str, *, error: bool = False) -> None:
        member = self._leases[key]
        keys = [self._k_counts, self._k_queue, self._k_leases, self._k_owners, self._k_pages]
        args: list[str | int] = [member, self.token, record, int(error)]
        await self._scripts["mark_done"](keys, args)
        del self._leases[key]

    async def is_finished(self) -> bool:
        return (await self.status()).finished

    async def stats(self) -> FrontierStats:
        full = await self.status()
        return FrontierStats(
            seen=full.seen, queued=full.queued, in_flight=full.in_flight, done=full.done
        )

    # -- shared state -----------------------------------------------------------------------

    async def status(self) -> CrawlStatus:
        """The whole crawl's counts, all workers together."""
        keys = [self._k_counts, self._k_queue, self._k_leases, self._k_workers]
        read = functools.partial(self._scripts["status"], keys, [])
        seen, done, errors, reclaimed, queued, leased, alive = await self.call(read)
        capped = self.max_pages is not None and done >= self.max_pages
        return CrawlStatus(
            seen=seen,
            queued=queued,
            in_flight=leased,
            done=done,
            errors=errors,
            reclaimed=reclaimed,
            workers=alive,
            finished=not leased and (not queued or capped),
        )

    async def pages(self, batch: int = 200, *, start: int = 0) -> AsyncIterator[Page]:
        """Every stored page from the ``start``-th on, once each, in completion order."""
        script = self._scripts["pages"]
        while True:
            read = functools.partial(script, [self._k_pages], [start, start + batch - 1])
            chunk: list[str] = await self.call(read)
            for text in chunk:
                yield decode(_loads(text))
            if len(chunk) < batch:
                return
            start += batch

    def read_pages(self) -> AsyncIterator[Page]:
        """:meth:`pages`, for :class:`~sitecrawl.frontier.PageStore`: read ``batch`` records
        at a time (one ``LRANGE`` each)."""
        return self.pages()

    async def read_meta(self) -> dict[str, str]:
        """The crawl's ``config`` hash, its options (``config``) left out."""
        stored: dict[str, str] = await self.call(lambda: self.client.hgetall(self._k_config))
        stored.pop("config", None)
        return stored

    async def crawl_seconds(self) -> float | None:
        """Unknown: workers come and go, none times the whole crawl."""
        return None
