"""``sitecrawl serve``: an HTTP API, its OpenAPI document and a live web UI over the
library's crawl driver (needs the ``serve`` extra: ``pip install 'sitecrawl[serve]'``).

:func:`build_app` makes the Starlette app of a :class:`ServeConfig`; each crawl lives in the
data directory as its state file, run by :class:`CrawlManager`; :func:`config_from_options`
turns an API caller's options (JSON, by config names) into a :class:`~sitecrawl.CrawlConfig`.
"""

from __future__ import annotations

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
