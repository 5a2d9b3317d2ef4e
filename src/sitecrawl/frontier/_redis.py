"""Redis frontier and page store: one crawl shared by worker processes on any number of machines.

Every key of crawl ``ID`` starts with ``sitecrawl:{ID}:`` (the braces make it a Redis Cluster hash
tag: one crawl, one slot). Layout::

    config            hash    base_url, config (JSON: the stored crawl, as
                              sitecrawl.frontier._stored encodes it), created,
                              sitecrawl, epoch (a random token: the crawl's identity),
                              options (JSON: what the crawl learnt, e.g. start URL redirects)
    counts            hash    seen, done, errors, reclaimed (counters); seq, front (queue order)
    seen:XXXX         set     the seen set, in 16,384 buckets (XXXX = low 14 bits, hex): each
                              member the signed 64-bit int of the 8-byte BLAKE2b of url_key(),
                              so each bucket is an intset, 8 bytes per URL (~10 B with keys)
    queue             zset    "depth\\nkey\\nurl" scored depth * 2**32 + 2**31 + seq: lowest
                              depth first, FIFO within it; released leases go ahead of their
                              depth (2**31 - front)
    leases            zset    "token\nmember": the same members, leased, each behind the
                              token of the worker holding it, scored by their deadline (ms,
                              Redis TIME)
    pages             list    the stored pages, completion order: each the name of its
                              record in ``records``; an earlier sitecrawl kept the record
                              itself here
    records           hash    "token:n" (the n-th record a worker sent) -> JSON page record
                              (sitecrawl._pagecodec: the page's fields, links with text, rel
                              and kind included); written just ahead of the DONE script that
                              names it in ``pages`` (a worker cut off between the two leaves
                              a record no page names: its page is fetched again)
    workers           zset    worker token -> liveness deadline (ms): alive while in the future
    host:HOST         hash    shared politeness of HOST (see sitecrawl.throttle._redis)
    host:HOST:tokens  zset    requests in flight on HOST: token -> deadline (ms)
    host:HOST:waiting zset    requests waiting for a full HOST: token -> arrival (ms)

Every multi-key update is one Lua script, so it is atomic, and every script first checks the
crawl's epoch (see :mod:`._redis_crawl`): a Redis restarted empty or flushed, or a crawl
started over, fails every call of every process instead of crawling into an empty crawl.
A worker takes leases inside ``async with frontier.working():``, which registers it in
``workers`` and runs its heartbeat. It leases ``lease_batch`` requests per call and hands them
out one by one (:meth:`~RedisFrontier.next`); a lease lasts ``lease_ttl`` seconds and the
heartbeat renews every lease the worker holds, handed out or not. A worker that dies stops
renewing, and the next lease call of any worker puts its expired leases back in the queue;
leaving ``working()`` (or closing) hands back those not handed out.
:meth:`~RedisFrontier.mark_done` (and :meth:`~RedisFrontier.complete`, which queues the page's
links in the same script) stores a page only for the worker that holds the lease, or when the
lease had expired and the request waits in the queue again: a page is stored once, and it
returns once Redis has it. Calls made while others are on the wire go together in one round
trip (:class:`~._redis_crawl.Pipeline`), and the leases ended while one ``DONE`` call is on the
wire end together in the next (one script for all). A worker does not send again the links it
knows are seen (the fingerprints it sent and Redis answered, up to ``_KNOWN_MAX``).

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
import contextlib
import functools
import hashlib
import os
import uuid
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Unpack

from .._exceptions import ConfigError, StateError
from .._json import dump_bytes as _dump_bytes
from .._json import loads as _loads
from .._models import Page, Request
from .._pagecodec import decode, encode
from ._base import Frontier, FrontierStats
from ._redis_crawl import CrawlArgs, CrawlScript, RedisCrawl, redact
from ._redis_lua import ADD, CLAIM, DONE, DONE_GONE, HEARTBEAT, NEXT, PAGES, STATUS

_BUCKET_BITS = 14
_BUCKET_MASK = (1 << _BUCKET_BITS) - 1
_KNOWN_MAX = 250_000  # fingerprints a worker remembers as seen (~18 MB at most)


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

    With ``base_url``, opening creates the crawl (storing ``config``, the stored crawl as a
    JSON-able dict, and a new epoch) or joins it when it is a crawl of the same site (``fresh``
    empties it first); without, the crawl must exist (workers, status, export) and
    ``base_url`` and ``config`` are read from it. Problems (unreachable Redis, unknown crawl,
    another site's crawl, and later a lost Redis or crawl) raise :class:`~sitecrawl.StateError`.
    ``max_pages`` is the whole crawl's page budget, held in Redis for every worker: give the
    crawler itself none. ``lease_batch`` requests are leased per round trip.
    """

    stores_pages = True
    poll_interval = 0.1

    def __init__(
        self,
        url: str,
        *,
        lease_ttl: float = 30.0,
        max_pages: int | None = None,
        lease_batch: int = 8,
        **crawl: Unpack[CrawlArgs],
    ) -> None:
        if lease_ttl <= 0:
            raise ConfigError("lease_ttl must be positive")
        if lease_batch < 1:
            raise ConfigError("lease_batch must be at least 1")
        super().__init__(url, **crawl)  # crawl_id, base_url, config, fresh, reconnect_timeout
        self.lease_ttl = lease_ttl
        self.max_pages = max_pages
        self.lease_batch = lease_batch
        self.token = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._leases: dict[str, str] = {}  # request key -> member, every lease held
        self._ready: deque[str] = deque()  # members leased, not handed out yet
        self._leasing = asyncio.Lock()  # one lease call at a time; the others take its batch
        self._scripts: dict[str, CrawlScript] = {}
        self._heartbeat: asyncio.Task[None] | None = None  # inside working()
        self._opened = 0
        k = self.prefix
        self._k_counts, self._k_queue, self._k_leases = k + "counts", k + "queue", k + "leases"
        self._k_pages, self._k_workers = k + "pages", k + "workers"
        self._k_records = k + "records"
        self._named = 0  # records this worker has sent (the next one's name)
        # Fingerprints this worker knows are in the seen set (it sent them, and Redis
        # answered): their links are not sent again. Emptied past _KNOWN_MAX.
        self._known: set[int] = set()
        # Leases ended, waiting for the call on the wire: they go together in the next.
        self._ends: list[tuple[str, bytes, bool, Sequence[Request], asyncio.Future[int]]] = []
        self._ender: asyncio.Task[None] | None = None

    def shard_for(self, host: str) -> RedisFrontier:
        """The instance holding ``host``'s politeness: this one (see RedisShards)."""
        return self

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
        self._known = set()
        for name, source in (
            ("add", ADD),
            ("claim", CLAIM),
            ("next", NEXT),
            ("done", DONE),
            ("heartbeat", HEARTBEAT),
            ("status", STATUS),
            ("pages", PAGES),
        ):
            self._scripts[name] = self.script(source, DONE_GONE if source is DONE else "")

    async def close(self) -> None:
        self._opened = max(0, self._opened - 1)
        client = self._client
        if client is None or self._opened:
            return
        await self._stop_heartbeat()
        self._ready.clear()
        try:
            if self.lost is None:  # else nothing is left to hand back
                await self._hand_back(list(self._leases))
                await self.call(lambda: client.zrem(self._k_workers, self.token))
        finally:
            await self.disconnect()

    @contextlib.asynccontextmanager
    async def working(self) -> AsyncIterator[None]:
        """This process as a worker of the crawl: registered (alive) and its leases renewed
        every third of ``lease_ttl`` while it lasts; on leaving, the leases not handed out
        go back to the queue and the worker is no longer counted alive."""
        if self._heartbeat is not None:
            raise RuntimeError("RedisFrontier.working() entered twice")
        await self.call(self._beat)
        self._heartbeat = asyncio.create_task(self._heartbeats())
        try:
            yield
        finally:
            await self._stop_heartbeat()
            if self.lost is None and self._client is not None:
                await self._hand_back_ready()
                client = self._client
                await self.call(lambda: client.zrem(self._k_workers, self.token))

    async def _stop_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None

    async def _hand_back(self, keys: list[str]) -> None:
        """Release these leases (``keys`` in the order leased): each goes back ahead of its
        depth, so the last released is first: released last to first, they keep their
        order."""
        ends = [self._end(key, b"") for key in reversed(keys)]  # queued in this order
        await asyncio.gather(*ends)

    async def _hand_back_ready(self) -> None:
        """Release the leases taken ahead and not handed out."""
        ready = [member.split("\n", 2)[1] for member in self._ready]
        self._ready.clear()
        await self._hand_back(ready)

    async def _beat(self) -> None:
        ttl = round(self.lease_ttl * 1000)
        members = list(self._leases.values())
        keys = [self._k_leases, self._k_workers]
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
        sent: set[int] = set()
        if not self._add_args(requests, keys, args, sent):
            return 0
        script = self._scripts["add"]
        added: int = await self.call(lambda: script(keys, args))
        self._knows(sent)
        return added

    async def claim(self, key: str) -> bool:
        fp = fingerprint(key)
        keys = [self._k_counts, f"{self.prefix}seen:{fp & _BUCKET_MASK:04x}"]
        script = self._scripts["claim"]
        claimed = bool(await self.call(lambda: script(keys, [fp])))
        self._knows({fp})
        return claimed

    async def next(self) -> Request | None:
        if self._heartbeat is None:
            raise RuntimeError("RedisFrontier.next() outside 'async with frontier.working()'")
        self.check()  # a lost worker hands out none of the leases it took ahead
        if not self._ready:
            async with self._leasing:
                if not self._ready:  # else another task's batch came in meanwhile
                    await self.call(self._lease)
        if not self._ready:
            return None
        depth, key, url = self._ready.popleft().split("\n", 2)
        return Request(url=url, key=key, depth=int(depth))

    async def _lease(self) -> None:
        keys = [self._k_counts, self._k_queue, self._k_leases]
        args: list[str | int] = [self.token, round(self.lease_ttl * 1000), self.max_pages or 0]
        args.append(self.lease_batch)
        members: list[str] = await self._scripts["next"](keys, args)
        for member in members:
            self._leases[member.split("\n", 2)[1]] = member
        self._ready.extend(members)

    async def mark_done(self, request: Request, page: Page | None = None) -> None:
        await self.complete(request, page)

    async def complete(
        self, request: Request, page: Page | None, links: Sequence[Request] = ()
    ) -> int:
        """:meth:`mark_done` and :meth:`add` in one script: one step in Redis."""
        if page is None and self._ready:  # those leased after it go back behind it
            await self._hand_back_ready()
        record = b"" if page is None else _dump_bytes(encode(page))
        error = page is not None and page.error is not None
        return await self._end(request.key, record, error=error, links=links)

    async def _end(
        self, key: str, record: bytes, *, error: bool = False, links: Sequence[Request] = ()
    ) -> int:
        """End the lease of ``key``: store ``record`` (a page) or, when empty, release it;
        queue ``links`` first. Ends made while a call is on the wire go in the next one."""
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._ends.append((key, record, error, links, future))
        if self._ender is None:
            self._ender = asyncio.create_task(self._send_ends())
        return await future

    async def _send_ends(self) -> None:
        try:
            while self._ends:
                batch, self._ends = self._ends, []
                keys = [
                    self._k_counts,
                    self._k_queue,
                    self._k_leases,
                    self._k_pages,
                    self._k_records,
                ]
                args: list[str | int] = [self.token]
                records: list[str | bytes] = ["HSET", self._k_records]
                sent: set[int] = set()
                script = self._scripts["done"]
                try:
                    for key, record, error, links, _ in batch:
                        member = self._leases[key]  # KeyError: not held
                        name = ""
                        if record:  # written beside the script, under a name of its own
                            self._named += 1
                            name = f"{self.token}:{self._named:x}"
                            records += (name, record)
                        args += [member, name, int(error), 0]
                        at = len(args) - 1
                        args[at] = self._add_args(links, keys, args, sent)
                    before = records if len(records) > 2 else ()
                    added: list[int] = await self.call(
                        lambda: script(keys, args, before)  # noqa: B023
                    )
                except BaseException as exc:
                    for *_, future in batch:
                        if not future.done():
                            if isinstance(exc, Exception):
                                future.set_exception(exc)
                            else:
                                future.cancel()
                    if not isinstance(exc, Exception):
                        raise
                    continue
                self._knows(sent)
                for (key, *_, future), n in zip(batch, added, strict=True):
                    self._leases.pop(key, None)
                    if not future.done():
                        future.set_result(n)
        finally:
            self._ender = None

    def _add_args(
        self,
        requests: Sequence[Request],
        keys: list[str],
        args: list[str | int],
        sent: set[int],
    ) -> int:
        """Append each request's seen bucket to ``keys``, its fingerprint and member to
        ``args`` (as ADD and DONE take them), and its fingerprint to ``sent``; leave out those
        this worker knows are seen, and those already in ``sent``. Returns how many were
        appended."""
        bucket = self.prefix + "seen:"
        known = self._known
        n = 0
        for r in requests:
            fp = fingerprint(r.key)
            if fp in known or fp in sent:
                continue
            sent.add(fp)
            keys.append(f"{bucket}{fp & _BUCKET_MASK:04x}")
            args += [fp, f"{r.depth}\n{r.key}\n{r.url}"]
            n += 1
        return n

    def _knows(self, sent: set[int]) -> None:
        """``sent`` fingerprints are in the seen set now (Redis answered the call)."""
        if len(self._known) + len(sent) > _KNOWN_MAX:
            self._known = set()
        self._known |= sent

    async def is_finished(self) -> bool:
        return (await self.status()).finished

    async def stats(self) -> FrontierStats:
        full = await self.status()
        ahead = len(self._ready)  # leased ahead, not handed out: still queued, to this worker
        return FrontierStats(
            seen=full.seen,
            queued=full.queued + ahead,
            in_flight=full.in_flight - ahead,
            done=full.done,
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
            # Names of records; an earlier sitecrawl kept the records themselves in the list.
            names = [name for name in chunk if not name.startswith("{")]
            records = dict(zip(names, await self._records(names), strict=True)) if names else {}
            for text in chunk:
                yield decode(_loads(records.get(text, text)))
            if len(chunk) < batch:
                return
            start += batch

    async def _records(self, names: list[str]) -> list[str]:
        """The records stored under ``names`` (in ``pages``: a record is never deleted once
        stored)."""
        client = self.client
        found: list[str | None] = await self.call(lambda: client.hmget(self._k_records, names))
        if None in found:
            lost = found.count(None)
            raise StateError(
                f"crawl {self.crawl_id!r} in Redis at {redact(self.url)} lost {lost} page"
                f" record{'s' if lost > 1 else ''} (first: {names[found.index(None)]!r})",
                path=redact(self.url),
            )
        return found  # type: ignore[return-value]

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
