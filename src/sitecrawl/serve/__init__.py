"""``sitecrawl serve`` and ``sitecrawl mcp``: crawls driven over HTTP, monitors that re-crawl
on a schedule and post signed webhooks, and MCP tools for agents. Everything here turns its
input into a :class:`~sitecrawl.CrawlConfig` and calls the library's one driver
(:meth:`~sitecrawl.AsyncCrawler.run`) or its functions; it needs the ``serve`` extra
(``pip install 'sitecrawl[serve]'``)."""

from __future__ import annotations

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
