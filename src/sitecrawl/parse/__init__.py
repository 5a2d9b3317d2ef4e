"""Parsing pages: HTML and PDF -> record fields (pure), the parser processes, word count."""

from __future__ import annotations

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
