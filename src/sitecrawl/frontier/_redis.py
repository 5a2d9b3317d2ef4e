"""Redis frontier and page store: one crawl shared by worker processes on any number of machines.

Every key of crawl ``ID`` starts with ``sitecrawl:{ID}:`` (the braces make it a Redis Cluster hash
tag: one crawl, one slot). Layout::

    config            hash    base_url, config (JSON of the crawl's options), created, sitecrawl,
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
    host:HOST         hash    shared politeness of HOST (see sitecrawl._throttle_redis)
    host:HOST:tokens  zset    requests in flight on HOST: token -> deadline (ms)
    host:HOST:waiting zset    requests waiting for a full HOST: token -> arrival (ms)

Every multi-key update is one Lua script, so it is atomic. A lease lasts ``lease_ttl`` seconds
and is renewed by a heartbeat while its page is in flight; a worker that dies stops renewing,
and the next :meth:`~RedisFrontier.next` of any worker puts its expired leases back in the
queue. :meth:`~RedisFrontier.mark_done` stores a page only for the worker that holds the lease,
or when the lease had expired and the request waits in the queue again: a page is stored once.

A lost connection is retried (redis-py's ``Retry`` with exponential backoff, then a reconnect
loop of up to ``reconnect_timeout`` seconds around every call); scripts are idempotent enough
for a retried call to lose nothing. redis is imported here only: without it, opening the
frontier says to install the ``[redis]`` extra.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from .._exceptions import ConfigError, StateError
from .._json import dumps as _dumps
from .._json import loads as _loads
from .._models import Page, Request
from .._pagecodec import decode, encode
from .._urls import url_key
from .._version import __version__
from ._base import Frontier, FrontierStats
from ._redis_lua import ADD, CLAIM, HEARTBEAT, MARK_DONE, NEXT

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

T = TypeVar("T")
_BUCKET_BITS = 14
_BUCKET_MASK = (1 << _BUCKET_BITS) - 1


@dataclass(frozen=True, slots=True)
class CrawlStatus(FrontierStats):
    """:class:`FrontierStats` of the whole crawl, plus errors, reclaimed leases and workers
    alive."""

    errors: int = 0
    reclaimed: int = 0
    workers: int = 0


def fingerprint(key: str) -> int:
    """The 8-byte BLAKE2b of a dedupe key, as a signed 64-bit int (an intset member)."""
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def redact(url: str) -> str:
    """``url`` without its password, fit for messages."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = parts.netloc.rsplit("@", 1)[1]
        user = f"{parts.username}:***@" if parts.username else ":***@"
        return urlunsplit(parts._replace(netloc=user + netloc))
    except ValueError:
        return url


def _import_redis() -> Any:
    try:
        import redis.asyncio
        import redis.backoff
        import redis.exceptions
        import redis.retry
    except ImportError:
        raise ConfigError(
            "the Redis backend needs the redis package: pip install 'sitecrawl[redis]'"
        ) from None
    return redis


class RedisFrontier(Frontier):
    """A frontier and page store for crawl ``crawl_id`` in the Redis at ``url``.

    With ``base_url``, opening creates the crawl (storing ``config``, the crawl's options as a
    JSON-able dict) or joins it when it is a crawl of the same site (``fresh`` empties it
    first); without, the crawl must exist (workers, status, export) and ``base_url`` and
    ``config`` are read from it. Problems (unreachable Redis, unknown crawl, another site's
    crawl) raise :class:`~sitecrawl.StateError`.
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
        if not crawl_id or any(c in crawl_id for c in "{}\n"):
            raise ConfigError(f"bad crawl id: {crawl_id!r}")
        if lease_ttl <= 0:
            raise ConfigError("lease_ttl must be positive")
        self.url = url
        self.crawl_id = crawl_id
        self.base_url = base_url
        self.config = config or {}
        self.prefix = f"sitecrawl:{{{crawl_id}}}:"
        self.lease_ttl = lease_ttl
        self.max_pages = max_pages
        self.reconnect_timeout = reconnect_timeout
        self.token = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._fresh = fresh
        self._redis: Any = None
        self._client: Any = None  # redis.asyncio.Redis: its stubs type pipelines poorly
        self._leases: dict[str, str] = {}  # request key -> member
        self._scripts: dict[str, AsyncScript] = {}
        self._heartbeat: asyncio.Task[None] | None = None  # from the first next(): a worker
        self._opened = 0
        k = self.prefix
        self._k_counts, self._k_queue, self._k_leases = k + "counts", k + "queue", k + "leases"
        self._k_owners, self._k_pages, self._k_workers = k + "owners", k + "pages", k + "workers"
        self._k_config = k + "config"

    # -- lifetime ---------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        if self._client is None:
            raise RuntimeError("RedisFrontier used before open() or after close()")
        return self._client

    async def open(self) -> None:
        self._opened += 1
        if self._opened > 1:  # nested use (the CLI reads the config, then the crawler opens)
            return
        try:
            await self._open()
        except BaseException:
            self._opened = 0
            raise

    async def _open(self) -> None:
        redis = self._redis = _import_redis()
        where = redact(self.url)
        try:
            client = redis.asyncio.Redis.from_url(
                self.url,
                decode_responses=True,
                socket_connect_timeout=5,
                retry=redis.retry.Retry(redis.backoff.ExponentialBackoff(cap=1.0, base=0.05), 3),
                retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
            )
        except ValueError as exc:
            raise StateError(f"bad Redis URL {where}: {exc}", path=where) from None
        try:
            await client.ping()
        except redis.exceptions.RedisError as exc:
            await client.aclose()
            raise StateError(f"cannot reach Redis at {where}: {exc}", path=where) from None
        self._client = client
        for name, source in (
            ("add", ADD),
            ("claim", CLAIM),
            ("next", NEXT),
            ("mark_done", MARK_DONE),
            ("heartbeat", HEARTBEAT),
        ):
            self._scripts[name] = client.register_script(source)
        try:
            await self.call(self._bind)
        except BaseException:
            self._client = None
            await client.aclose()
            raise

    async def _bind(self) -> None:
        """Create or join the crawl: check what ``config`` holds."""
        client = self.client
        where = f"{redact(self.url)} crawl {self.crawl_id}"
        if self._fresh and self.base_url is not None:
            await self.drop()
        stored = await client.hgetall(self._k_config)
        if not stored:
            if self.base_url is None:
                raise StateError(
                    f"no crawl {self.crawl_id!r} in Redis at {redact(self.url)}"
                    " (start it with: sitecrawl crawl URL --redis ...)",
                    path=where,
                )
            created = await client.hsetnx(self._k_config, "base_url", self.base_url)
            if created:
                await client.hset(
                    self._k_config,
                    mapping={
                        "config": json.dumps(self.config),
                        "created": datetime.now(UTC).isoformat(timespec="seconds"),
                        "sitecrawl": __version__,
                    },
                )
                return
            stored = await client.hgetall(self._k_config)
        base = stored.get("base_url", "")
        if self.base_url is not None and url_key(base) != url_key(self.base_url):
            raise StateError(
                f"crawl {self.crawl_id!r} in Redis at {redact(self.url)} is a crawl of {base},"
                f" not {self.base_url} (start over with --fresh, or pick another --crawl-id)",
                path=where,
            )
        self.base_url = base
        self.config = json.loads(stored.get("config") or "{}")
        self.options = json.loads(stored.get("options") or "null")

    async def save_options(self, options: dict[str, Any]) -> None:
        """Stored in the ``config`` hash's ``options`` field (JSON)."""
        self.options = options

        async def store() -> None:
            await self.client.hset(self._k_config, "options", json.dumps(options))

        await self.call(store)

    async def drop(self) -> int:
        """Delete every key of this crawl; return how many there were."""
        client = self.client
        deleted = 0
        batch: list[str] = []
        async for key in client.scan_iter(match=_glob_escape(self.prefix) + "*", count=1000):
            batch.append(key)
            if len(batch) >= 1000:
                deleted += await client.unlink(*batch)
                batch.clear()
        if batch:
            deleted += await client.unlink(*batch)
        return deleted

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
            for key in list(self._leases):
                await self.call(functools.partial(self._end, key, ""))
            await self.call(lambda: client.zrem(self._k_workers, self.token))
        finally:
            self._client = None
            await client.aclose()

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        """Run ``operation`` (a Redis call), reconnecting with backoff for up to
        ``reconnect_timeout`` seconds; then (or on any other Redis error) raise StateError."""
        errors = self._redis.exceptions
        deadline = time.monotonic() + self.reconnect_timeout
        pause = 0.05
        while True:
            try:
                return await operation()
            except (errors.ConnectionError, errors.TimeoutError) as exc:
                if time.monotonic() >= deadline:
                    raise StateError(
                        f"lost Redis at {redact(self.url)}: {exc}", path=redact(self.url)
                    ) from None
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
            except errors.RedisError as exc:
                if "LOADING" in str(exc) or "NOSCRIPT" in str(exc):
                    await asyncio.sleep(pause)
                    continue
                raise StateError(
                    f"Redis at {redact(self.url)}: {exc}", path=redact(self.url)
                ) from None

    async def _beat(self) -> None:
        ttl = round(self.lease_ttl * 1000)
        members = list(self._leases.values())
        keys = [self._k_leases, self._k_owners, self._k_workers]
        await self._scripts["heartbeat"](keys, [self.token, ttl, *members])

    async def _heartbeats(self) -> None:
        """Renew this worker's leases and liveness every third of the lease time."""
        while True:
            await asyncio.sleep(self.lease_ttl / 3)
            await self.call(self._beat)

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
        async def check() -> bool:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.zcard(self._k_queue).zcard(self._k_leases).hget(self._k_counts, "done")
                queued, leased, done = await pipe.execute()
            capped = self.max_pages is not None and int(done or 0) >= self.max_pages
            return not leased and (not queued or capped)

        return await self.call(check)

    async def stats(self) -> FrontierStats:
        full = await self.status()
        return FrontierStats(
            seen=full.seen, queued=full.queued, in_flight=full.in_flight, done=full.done
        )

    # -- shared state -----------------------------------------------------------------------

    async def status(self) -> CrawlStatus:
        """The whole crawl's counts, all workers together."""

        async def read() -> CrawlStatus:
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.time().hmget(self._k_counts, ["seen", "done", "errors", "reclaimed"])
                pipe.zcard(self._k_queue).zcard(self._k_leases)
                now, counts, queued, leased = await pipe.execute()
            now_ms = int(now[0]) * 1000 + int(now[1]) // 1000
            alive = await self.client.zcount(self._k_workers, now_ms, "+inf")
            seen, done, errors, reclaimed = (int(n or 0) for n in counts)
            return CrawlStatus(
                seen=seen,
                queued=queued,
                in_flight=leased,
                done=done,
                errors=errors,
                reclaimed=reclaimed,
                workers=alive,
            )

        return await self.call(read)

    async def pages(self, batch: int = 200) -> AsyncIterator[Page]:
        """Every stored page, once each, in completion order."""
        start = 0
        while True:
            read = functools.partial(self.client.lrange, self._k_pages, start, start + batch - 1)
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

    def script(self, source: str) -> AsyncScript:
        """Register a Lua script on this frontier's connection (for the shared throttle)."""
        script: AsyncScript = self.client.register_script(source)
        return script

    async def time_ms(self) -> int:
        """Redis's clock, in ms."""
        seconds, micros = await self.call(self.client.time)
        return int(seconds) * 1000 + int(micros) // 1000


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
