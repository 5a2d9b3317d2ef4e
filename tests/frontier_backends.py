"""The frontier backends the contract suite runs against: one entry per backend.

A new backend (Redis, say) joins the suite by adding one :class:`Backend` here. ``make`` builds
a frontier over ``place`` (a fresh directory per test); calling it again with the same place
must give a frontier over the same store when the backend is durable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from redis_server import second_server, shared_server
from sitecrawl.frontier import (
    Frontier,
    MemoryFrontier,
    RedisFrontier,
    RedisShards,
    SqliteFrontier,
)

BASE_URL = "http://site.test/"


@dataclass(frozen=True)
class Backend:
    name: str
    make: Callable[[Path], Frontier]
    durable: bool


BACKENDS: tuple[Backend, ...] = (
    Backend("memory", lambda place: MemoryFrontier(), durable=False),
    Backend(
        "sqlite",
        lambda place: SqliteFrontier(place / "state.db", base_url=BASE_URL),
        durable=True,
    ),
    Backend(
        "redis",
        # One crawl per test directory, in the session's redis-server.
        lambda place: RedisFrontier(shared_server().url, crawl_id=place.name, base_url=BASE_URL),
        durable=True,
    ),
    Backend(
        "redis-shards",
        # The crawl spread over two servers by host (site.test's shard holds it all).
        lambda place: RedisShards(
            [shared_server().url, second_server().url], crawl_id=place.name, base_url=BASE_URL
        ),
        durable=True,
    ),
)
DURABLE = tuple(backend for backend in BACKENDS if backend.durable)
