"""Frontier backends behind one contract (see :mod:`._base`).

The Redis backend is imported on first use (``from sitecrawl.frontier import RedisFrontier``):
it needs the optional ``redis`` package only when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._base import Frontier as Frontier
    from ._base import FrontierStats as FrontierStats
    from ._base import PageStore as PageStore
    from ._memory import MemoryFrontier as MemoryFrontier
    from ._redis import CrawlStatus as CrawlStatus
    from ._redis import RedisFrontier as RedisFrontier
    from ._redis_crawl import CrawlScript as CrawlScript
    from ._redis_crawl import import_redis as import_redis
    from ._redis_crawl import redact as redact
    from ._sqlite import SqliteFrontier as SqliteFrontier
    from ._stored import decode as decode
    from ._stored import encode as encode
    from ._stored import given_rules as given_rules
    from ._stored import joined as joined
    from ._stored import origin_of as origin_of
    from ._stored import take_or_refuse as take_or_refuse

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "CrawlScript": "._redis_crawl",
    "CrawlStatus": "._redis",
    "Frontier": "._base",
    "FrontierStats": "._base",
    "MemoryFrontier": "._memory",
    "PageStore": "._base",
    "RedisFrontier": "._redis",
    "SqliteFrontier": "._sqlite",
    "decode": "._stored",
    "encode": "._stored",
    "given_rules": "._stored",
    "import_redis": "._redis_crawl",
    "joined": "._stored",
    "origin_of": "._stored",
    "redact": "._redis_crawl",
    "take_or_refuse": "._stored",
}

__all__ = [
    "CrawlScript",
    "CrawlStatus",
    "Frontier",
    "FrontierStats",
    "MemoryFrontier",
    "PageStore",
    "RedisFrontier",
    "SqliteFrontier",
    "decode",
    "encode",
    "given_rules",
    "import_redis",
    "joined",
    "origin_of",
    "redact",
    "take_or_refuse",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
