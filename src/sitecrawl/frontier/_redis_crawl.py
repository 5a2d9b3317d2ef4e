"""One crawl's connection to Redis: create or join the crawl (its ``config`` hash and epoch),
reconnect when the connection drops, run the crawl's Lua scripts behind the epoch guard, and
know when the crawl is lost. :class:`~._redis.RedisFrontier` is built on it; the shared
throttle runs its scripts through it (:meth:`RedisCrawl.script`, :meth:`RedisCrawl.call`).

The epoch is a random token written with the crawl's config when the crawl is created. Every
script but the one creating the crawl checks it first (:func:`~._redis_lua.guard`), so a
Redis restarted empty or flushed, or the crawl started over (``fresh``), is seen by the next
call of every process: the crawl is *lost* (:attr:`RedisCrawl.lost` says why) and every
later call raises :class:`~sitecrawl.StateError` at once. So does a connection that stays
down past ``reconnect_timeout``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Required, TypedDict, TypeVar
from urllib.parse import urlsplit, urlunsplit

from .._exceptions import ConfigError, StateError
from .._urls import url_key
from .._version import __version__
from ._redis_lua import CREATE, GONE, guard

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

T = TypeVar("T")
#: How long a batch waits for more calls before it is sent (s): 0.5 ms, a turn of the event
#: loop under uvloop. Fewer round trips cost Redis less a page (section 44 of bench/RESULTS.md).
GATHER = 0.0005
#: A word of a command: text (sent as UTF-8), bytes (as they are) or a number (its repr).
Word = str | bytes | int | float


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


def import_redis() -> Any:
    """The redis package; without it, a ConfigError naming the extra to install."""
    try:
        import redis.asyncio
        import redis.asyncio.retry
        import redis.backoff
        import redis.exceptions
    except ImportError:
        raise ConfigError(
            "the Redis backend needs the redis package: pip install 'sitecrawl[redis]'"
        ) from None
    return redis


class CrawlArgs(TypedDict, total=False):
    """The keywords of :class:`RedisCrawl` (what a subclass passes on)."""

    crawl_id: Required[str]
    base_url: str | None
    config: dict[str, Any] | None
    fresh: bool
    reconnect_timeout: float


class RedisCrawl:
    """Crawl ``crawl_id`` in the Redis at ``url``: created by :meth:`connect` when
    ``base_url`` is given and it does not exist (emptied first with ``fresh``), else joined
    (``base_url`` and ``config`` are then read from it)."""

    def __init__(
        self,
        url: str,
        *,
        crawl_id: str,
        base_url: str | None = None,
        config: dict[str, Any] | None = None,
        fresh: bool = False,
        reconnect_timeout: float = 60.0,
    ) -> None:
        if not crawl_id or any(c in crawl_id for c in "{}\n"):
            raise ConfigError(f"bad crawl id: {crawl_id!r}")
        self.url = url
        self.crawl_id = crawl_id
        self.base_url = base_url
        self.config = config  # the stored crawl (sitecrawl.frontier._stored.encode)
        self.prefix = f"sitecrawl:{{{crawl_id}}}:"
        self.reconnect_timeout = reconnect_timeout
        self.epoch = ""  # the crawl's identity, read by connect()
        self.lost: str | None = None  # why this crawl can no longer be used
        self.options: dict[str, Any] | None = None  # what the crawl learnt (save_options)
        self._fresh = fresh
        self.shard = "0/1"  # this instance's place among the crawl's shards (RedisShards)
        self._redis: Any = None
        self._client: Any = None  # redis.asyncio.Redis: its stubs type pipelines poorly
        self._k_config = self.prefix + "config"
        self.pipeline = Pipeline(self)

    @property
    def client(self) -> Any:
        if self._client is None:
            raise RuntimeError("RedisFrontier used before open() or after close()")
        return self._client

    async def connect(self) -> None:
        """Connect, then create or join the crawl; StateError when that cannot be done."""
        redis = self._redis = import_redis()
        where = redact(self.url)
        try:
            client = redis.asyncio.Redis.from_url(
                self.url,
                decode_responses=True,
                socket_connect_timeout=5,
                retry=redis.asyncio.retry.Retry(
                    redis.backoff.ExponentialBackoff(cap=1.0, base=0.05), 3
                ),
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
        self.lost = None
        try:
            await self.call(self._bind)
        except BaseException:
            await self.disconnect()
            raise

    async def disconnect(self) -> None:
        if self._client is not None:
            await self.pipeline.release()
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _bind(self) -> None:
        """Create or join the crawl: check what ``config`` holds; read the epoch."""
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
            fields = {
                "base_url": self.base_url,
                "config": json.dumps(self.config),
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "sitecrawl": __version__,
                "epoch": uuid.uuid4().hex,
            }
            if self.shard != "0/1":
                fields["shard"] = self.shard
            create = client.register_script(CREATE)
            await create([self._k_config], [item for pair in fields.items() for item in pair])
            stored = await client.hgetall(self._k_config)  # ours, or a concurrent seed's
        if stored and not stored.get("epoch"):  # created by a sitecrawl without epochs
            await client.hsetnx(self._k_config, "epoch", uuid.uuid4().hex)
            stored = await client.hgetall(self._k_config)
        self.epoch = stored.get("epoch", "")
        if stored.get("shard", "0/1") != self.shard:
            place, _, count = stored.get("shard", "0/1").partition("/")
            raise StateError(
                f"crawl {self.crawl_id!r} in Redis at {redact(self.url)} is shard {place} of"
                f" {count} Redis instances (here: {self.shard.replace('/', ' of ')}): give"
                " every process the crawl's --redis URLs, in the same order",
                path=where,
            )
        base = stored.get("base_url", "")
        if self.base_url is not None and url_key(base) != url_key(self.base_url):
            raise StateError(
                f"crawl {self.crawl_id!r} in Redis at {redact(self.url)} is a crawl of {base},"
                f" not {self.base_url} (start over with --fresh, or pick another --crawl-id)",
                path=where,
            )
        self.base_url = base
        self.config = json.loads(stored.get("config") or "null") or None
        self.options = json.loads(stored.get("options") or "null")

    async def save_config(self, config: dict[str, Any]) -> None:
        """Stored in the ``config`` hash's ``config`` field (JSON)."""
        self.config = config

        async def store() -> None:
            await self.client.hset(self._k_config, "config", json.dumps(config))

        await self.call(store)

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

    def script(self, source: str, gone: str = "") -> CrawlScript:
        """Register a Lua script that runs only on this crawl (behind the epoch guard, which
        runs ``gone`` when the crawl is not there)."""
        return CrawlScript(self, self.client.register_script(guard(gone) + source))

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        """Run ``operation`` (a Redis call), reconnecting with backoff for up to
        ``reconnect_timeout`` seconds; then (or on any other Redis error) raise StateError.
        Past that window, or when the crawl's epoch is gone, the crawl is lost: this and
        every later call raise StateError at once."""
        errors = self._redis.exceptions
        where = redact(self.url)
        deadline = time.monotonic() + self.reconnect_timeout
        pause = 0.05
        while True:
            if self.lost is not None:
                raise StateError(self.lost, path=where)
            try:
                return await operation()
            except (errors.ConnectionError, errors.TimeoutError) as exc:
                if time.monotonic() >= deadline:
                    self.lose(
                        f"lost Redis at {where}: unreachable for"
                        f" {self.reconnect_timeout:g} s ({exc})"
                    )
                    continue
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)
            except errors.RedisError as exc:
                if str(exc).startswith(GONE):  # the error code of the epoch guard
                    self.lose(
                        f"crawl {self.crawl_id!r} is gone from Redis at {where} (restarted"
                        " empty, flushed, or started over with --fresh)"
                    )
                    continue
                if "LOADING" in str(exc) or "NOSCRIPT" in str(exc):
                    await asyncio.sleep(pause)
                    continue
                raise StateError(f"Redis at {where}: {exc}", path=where) from None

    def check(self) -> None:
        """Raise StateError when the crawl is lost (as every call then does)."""
        if self.lost is not None:
            raise StateError(self.lost, path=redact(self.url))

    def lose(self, reason: str) -> None:
        """From now on every call raises StateError with ``reason`` (the first one kept)."""
        if self.lost is None:
            self.lost = reason


class CrawlScript:
    """A Lua script of a crawl, called as ``script(keys, args)``: the crawl's config key and
    epoch go last, for the guard to check and take off. Calls go through the crawl's
    :class:`Pipeline`."""

    __slots__ = ("_crawl", "_script")

    def __init__(self, crawl: RedisCrawl, script: AsyncScript) -> None:
        self._crawl = crawl
        self._script = script

    async def __call__(
        self,
        keys: Sequence[str],
        args: Sequence[Word],
        before: Sequence[Word] = (),
    ) -> Any:
        """Run the script; ``before``: a plain command sent just ahead of it, in the same
        round trip (the DONE script's page records, which never go through Lua: section 44 of
        bench/RESULTS.md). When that command fails, so does the call, once the script ran."""
        crawl = self._crawl
        return await crawl.pipeline.run(
            self._script, [*keys, crawl._k_config, *args, crawl.epoch], len(keys) + 1, before
        )


class Pipeline:
    """Script calls made while a batch is on the wire wait, then go together, in the order
    made, as one pipeline: one round trip (one write, one read) for all of them. Each script
    still runs whole and alone in Redis; a caller gets its own reply or error, and is
    answered only once Redis has run its call, as with a call of its own."""

    __slots__ = ("_connection", "_crawl", "_queue", "_sender", "batches", "calls")

    def __init__(self, crawl: RedisCrawl) -> None:
        self._crawl = crawl
        self._queue: list[_Call] = []
        self._sender: asyncio.Task[None] | None = None
        # The pipeline's own connection, taken from the client's pool once and kept while it
        # works (the pool's checks and bookkeeping cost more than a small batch).
        self._connection: Any = None
        self.batches = 0  # round trips made (for benchmarks)
        self.calls = 0

    async def release(self) -> None:
        """Give the pipeline's connection back to the pool (before the client closes)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await self._crawl.client.connection_pool.release(connection)

    async def run(
        self,
        script: AsyncScript,
        words: list[Any],
        numkeys: int,
        before: Sequence[Word] = (),
    ) -> Any:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.append((script, words, numkeys, before, future))
        if self._sender is None:
            self._sender = asyncio.create_task(self._send())
        return await future

    async def _send(self) -> None:
        try:
            while self._queue:
                await asyncio.sleep(GATHER)  # (calls made meanwhile go in the same batch)
                batch, self._queue = self._queue, []
                batch = [call for call in batch if not call[-1].done()]  # cancelled waiting
                if batch:
                    await self._send_batch(batch)
        finally:
            self._sender = None

    async def _send_batch(self, batch: list[_Call]) -> None:
        errors = self._crawl._redis.exceptions
        self.batches += 1
        self.calls += len(batch)
        try:
            replies = await self._execute(batch)
            missing = {
                id(s): s
                for (s, *_), r in zip(batch, replies, strict=True)
                if isinstance(r, errors.NoScriptError)
            }
            if missing:  # a Redis restarted, or scripts flushed: load them, run those again
                for script in missing.values():
                    script.sha = await self._crawl.client.script_load(script.script)
                again = [
                    call
                    for call, r in zip(batch, replies, strict=True)
                    if isinstance(r, errors.NoScriptError)
                ]
                answers = iter(await self._execute(again))
                replies = [
                    next(answers) if isinstance(r, errors.NoScriptError) else r for r in replies
                ]
        except Exception as exc:
            for *_, future in batch:
                if not future.done():
                    future.set_exception(exc)
            return
        except BaseException:
            for *_, future in batch:
                future.cancel()
            raise
        for (*_, future), reply in zip(batch, replies, strict=True):
            if future.done():
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def _execute(self, batch: list[_Call]) -> list[Any]:
        """One write, then the replies in order, all within the connection's socket timeout
        (one timer for the batch, not one a reply); an error reply is its call's error (a
        failed ``before`` command's, or else the script's). Any other failure leaves the
        connection closed (never half read) and fails the batch."""
        errors = self._crawl._redis.exceptions
        connection = self._connection
        if connection is None:
            pool = self._crawl.client.connection_pool
            connection = self._connection = await pool.get_connection()
        read = functools.partial(connection.read_response, timeout=math.inf)
        try:
            await connection.send_packed_command(_pack(batch), check_health=False)
            replies: list[Any] = []
            async with asyncio.timeout(connection.socket_timeout):
                for _, _, _, before, _ in batch:
                    failed: Exception | None = None
                    if before:
                        try:
                            await read()
                        except errors.ResponseError as exc:
                            failed = exc
                    try:
                        replies.append(await read())
                    except errors.ResponseError as exc:
                        replies.append(exc)
                    if failed is not None and not isinstance(replies[-1], errors.NoScriptError):
                        replies[-1] = failed
            return replies
        except BaseException as exc:
            await connection.disconnect(nowait=True)
            await self.release()
            if isinstance(exc, TimeoutError):  # (the batch's timer: redis-py's error, retried)
                raise errors.TimeoutError("Timeout reading from Redis") from None
            raise


_Call = tuple["AsyncScript", list[Any], int, Sequence[Word], asyncio.Future[Any]]


def _pack(batch: list[_Call]) -> bytes:
    """The batch's commands in Redis's protocol (RESP), as redis-py packs them (str as UTF-8,
    numbers as their repr, bytes as they are), in fewer steps: each call's ``before``
    command, then its EVALSHA."""
    out: list[bytes] = []
    for script, words, numkeys, before, _ in batch:
        if before:
            out.append(b"*%d\r\n" % len(before))
            _words(out, before)
        out.append(b"*%d\r\n$7\r\nEVALSHA\r\n" % (len(words) + 3))
        _words(out, (script.sha, numkeys, *words))
    return b"".join(out)


def _words(out: list[bytes], words: Sequence[Word]) -> None:
    for word in words:
        if isinstance(word, bytes):  # (a page record: appended, not copied into a format)
            out += (b"$%d\r\n" % len(word), word, b"\r\n")
            continue
        data = word.encode() if isinstance(word, str) else repr(word).encode()
        out.append(b"$%d\r\n%b\r\n" % (len(data), data))


def _glob_escape(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
