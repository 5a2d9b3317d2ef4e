"""What the server lets an API caller crawl: only http(s) URLs, of the hosts ``--allow-hosts``
allows (a scope that would leave them for hosts it does not allow is refused too), and only
what this machine can run (Markdown needs its extra, rendering a browser): each refused when
the crawl is asked for, naming why. Redirects, links and addresses then follow the crawl's
own scope and address rules, as on the command line.

With private targets refused (``--no-allow-private-targets``, the default on an address other
than loopback), a start URL whose host is or resolves to a loopback, private or link-local
address is refused too (:func:`refused_target`; the fetcher's classes, so one definition),
and so is ``allow_private_redirects`` (which would let a public start lead there)."""

from __future__ import annotations

import asyncio
import fnmatch
import socket
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from .._config import CrawlConfig
from .._exceptions import ConfigError
from ..control import CrawlScope
from ..fetch import CLASS_NAMES, PUBLIC, address_class
from ._options import OptionError, config_from_options, with_cli_defaults

#: ``guard(url, options)``: what refuses a crawl of ``url`` with ``options`` (None: nothing),
#: awaited (:func:`refused_target`).
TargetGuard = Callable[[Any, Mapping[str, Any]], Awaitable["OptionError | None"]]
#: Options that, given, would let a crawl reach private addresses: refused with them.
_WIDENING = ("allow_private_redirects",)
#: Options whose URL the server connects to besides the start URL (a monitor's webhook).
_REACHED = ("proxy", "webhook")


class HostNotAllowed(ConfigError):
    """The URL's host is not one ``--allow-hosts`` allows (or not http/https)."""


def host_allowed(url: str, patterns: tuple[str, ...]) -> str | None:
    """Why ``url`` may not be crawled (None: it may): only http(s), and its host one of
    ``patterns`` (globs; empty: any host)."""
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https"):
        return f"only http and https URLs are crawled, not {parts.scheme or 'this'}:"
    host = (parts.hostname or "").lower()
    if not host:
        return "the URL has no host"
    if patterns and not any(fnmatch.fnmatchcase(host, p.lower()) for p in patterns):
        return f"host {host} is not allowed on this server (--allow-hosts)"
    return None


def can_run(config: CrawlConfig) -> None:
    """Refuse at once what this machine cannot run: Markdown without its extra, rendering
    without a browser (:class:`OptionError` naming the option and what to install)."""
    from ..parse import require_markdown
    from ..render import find_browser

    try:
        if config.markdown:
            require_markdown()
    except ConfigError as exc:
        raise OptionError("markdown", str(exc)) from None
    try:
        if config.render.mode != "never":
            find_browser(config.render)
    except ConfigError as exc:
        raise OptionError("render", str(exc)) from None


def checked_config(
    url: Any, options: Mapping[str, Any], allow_hosts: tuple[str, ...]
) -> CrawlConfig:
    """The config of a crawl of ``url`` with ``options`` (the command line's defaults for
    those not given), or :class:`OptionError` / :class:`HostNotAllowed`."""
    config = config_from_options(url, with_cli_defaults(options))
    can_run(config)
    for start in config.starts:
        refused = host_allowed(start, allow_hosts)
        if refused is not None:
            raise HostNotAllowed(refused)
    if allow_hosts:  # a scope that leaves its hosts leaves them for allowed ones only
        scope = CrawlScope(config.starts, config.scope_kind)
        for start in config.starts:
            probe = start.replace("://", "://sitecrawl-probe.", 1)
            if scope.holds_host(probe) and host_allowed(probe, allow_hosts):
                raise HostNotAllowed(
                    f"scope {config.scope_kind} reaches hosts --allow-hosts does not allow"
                )
    return config


async def private_target(url: str) -> str | None:
    """Why ``url`` may not be crawled with private targets refused: its host is, or resolves
    to, a loopback, private or link-local address (any of its addresses). None when every
    address is public, and for what is refused or failed elsewhere (not an http(s) URL with a
    host: :func:`host_allowed`; a name that does not resolve: the crawl's own DNS error)."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError, ValueError):
        return None
    for *_, address in found:
        kind = address_class(str(address[0]))
        if kind != PUBLIC:
            shown = host if str(address[0]) == host.strip("[]") else f"{host} ({address[0]})"
            return (
                f"{shown} is a {CLASS_NAMES[kind]} address, not crawled for API callers"
                " on this server (--allow-private-targets)"
            )
    return None


async def refused_target(url: Any, options: Mapping[str, Any]) -> OptionError | None:
    """What refuses a crawl of ``url`` with ``options`` when private targets are refused
    (an :class:`OptionError` naming ``url``, ``proxy``, a monitor's ``webhook`` or
    ``allow_private_redirects``), or None."""
    for name in _WIDENING:
        if options.get(name):
            return OptionError(name, "not allowed on this server (--allow-private-targets)")
    named = [("url", url), *((name, options.get(name)) for name in _REACHED)]
    for name, value in named:
        if isinstance(value, str):
            why = await private_target(value)
            if why is not None:
                return OptionError(name, why)
    return None
