"""Frontier backends behind one contract (see :mod:`._base`)."""

from ._base import Frontier, FrontierStats
from ._memory import MemoryFrontier

__all__ = ["Frontier", "FrontierStats", "MemoryFrontier"]
