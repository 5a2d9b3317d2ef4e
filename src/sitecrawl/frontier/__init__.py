"""Frontier backends behind one contract (see :mod:`._base`).

The Redis backend is imported on first use (``from sitecrawl.frontier import RedisFrontier``):
it needs the optional ``redis`` package only when used.
"""

from __future__ import annotations

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
