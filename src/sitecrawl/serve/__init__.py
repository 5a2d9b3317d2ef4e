"""``sitecrawl serve`` and ``sitecrawl mcp``: an HTTP API, its OpenAPI document and a live web
UI over the library's crawl driver, monitors that re-crawl on a schedule and post signed
webhooks, and MCP tools for agents (needs the ``serve`` extra: ``pip install
'sitecrawl[serve]'``). Everything here turns its input into a :class:`~sitecrawl.CrawlConfig`
and calls the library's one driver (:meth:`~sitecrawl.AsyncCrawler.run`) or its functions.

:func:`build_app` makes the Starlette app of a :class:`ServeConfig`; each crawl lives in the
data directory as its state file, run by :class:`CrawlManager`; :func:`config_from_options`
turns an API caller's options (JSON, by config names) into a :class:`~sitecrawl.CrawlConfig`;
:class:`MonitorService` runs the monitors, :func:`monitor_routes` serves them, and
:func:`mcp_server` / :func:`mcp_asgi_app` are the MCP tools over stdio and HTTP.
"""

from __future__ import annotations

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
