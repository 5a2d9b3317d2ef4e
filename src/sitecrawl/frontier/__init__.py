"""Frontier backends behind one contract (see :mod:`._base`)."""

from ._base import Frontier, FrontierStats
from ._memory import MemoryFrontier
from ._sqlite import SqliteFrontier

__all__ = ["Frontier", "FrontierStats", "MemoryFrontier", "SqliteFrontier"]
