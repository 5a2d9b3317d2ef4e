"""Frontier backends behind one contract (see :mod:`._base`).

The Redis backend is imported on first use (``from sitecrawl.frontier import RedisFrontier``):
it needs the optional ``redis`` package only when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._base import Frontier, FrontierStats, PageStore
from ._memory import MemoryFrontier
from ._sqlite import SqliteFrontier

if TYPE_CHECKING:
    from ._redis import RedisFrontier

__all__ = [
    "Frontier",
    "FrontierStats",
    "MemoryFrontier",
    "PageStore",
    "RedisFrontier",
    "SqliteFrontier",
]


def __getattr__(name: str) -> Any:
    if name == "RedisFrontier":
        from ._redis import RedisFrontier

        return RedisFrontier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
