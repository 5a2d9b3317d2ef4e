"""Which hosts and paths belong to a crawl: :class:`CrawlScope`. Pure, no I/O.

``site``: a start URL's host and port, with or without ``www.``; ``subdomains``: also its
subdomains; ``domain``: every host of its registrable domain (the Public Suffix List's eTLD+1;
an IP address or a one-label name is its own domain), same port; ``prefix``: a start URL's
site and its directory (``/book/`` crawls ``/book/...``). Several start URLs: the union, looked
up in sets, so a list of thousands of start URLs costs no more per link than one.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Literal, TypeAlias

from .._exceptions import ConfigError
from .._urls import split_host

ScopeKind: TypeAlias = Literal["site", "prefix", "subdomains", "domain"]
SCOPE_KINDS: tuple[ScopeKind, ...] = ("site", "prefix", "subdomains", "domain")


def default_scope(start_url: str) -> ScopeKind:
    """``prefix`` when ``start_url``'s path is a directory other than ``/``, else ``site``."""
    path = url_path(start_url)
    return "prefix" if path != "/" and path.endswith("/") else "site"


def url_path(href: str) -> str:
    """The path of an http(s) href (``/`` when it has none), without query or fragment."""
    start = href.index("://") + 3
    slash = href.find("/", start)
    if slash < 0:
        return "/"
    end = len(href)
    for stop in "?#":
        at = href.find(stop, slash)
        if 0 <= at < end:
            end = at
    return href[slash:end]


def _split_port(host: str) -> tuple[str, str]:
    """``("example.com", ":8080")`` from ``example.com:8080``; IPv6 brackets kept."""
    colon = host.rfind(":")
    if colon > host.rfind("]"):
        return host[:colon], host[colon:]
    return host, ""


def _site(href: str) -> str:
    """``host[:port]`` of ``href`` with a leading ``www.`` dropped."""
    host = split_host(href)
    return host[4:] if host.startswith("www.") else host


@lru_cache(maxsize=1)
def _public_suffixes() -> object:
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@lru_cache(maxsize=4096)
def registrable_domain(hostname: str) -> str:
    """The eTLD+1 of ``hostname`` (``shop.example.co.uk`` -> ``example.co.uk``); an IP
    address, a one-label name or a public suffix itself is its own domain."""
    bare = hostname.strip("[]")
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        return hostname
    if "." not in hostname:
        return hostname
    found = _public_suffixes().privatesuffix(hostname)  # type: ignore[attr-defined]
    return str(found) if found else hostname


class CrawlScope:
    """The union of the start URLs' scopes (one kind for all of them). :meth:`retarget`
    moves one start (a start URL that redirected) and the scope with it."""

    __slots__ = ("_domains", "_prefixes", "_sites", "_starts", "kind")

    def __init__(self, start_urls: list[str] | tuple[str, ...], kind: ScopeKind) -> None:
        if not start_urls:
            raise ConfigError("a crawl needs at least one start URL")
        if kind not in SCOPE_KINDS:
            raise ConfigError(f"scope must be one of {', '.join(SCOPE_KINDS)}, got {kind!r}")
        self.kind = kind
        self._starts = list(dict.fromkeys(start_urls))
        self._index()

    def _index(self) -> None:
        self._sites: set[str] = set()
        self._prefixes: dict[str, list[str]] = {}
        self._domains: set[str] = set()
        for url in self._starts:
            site = _site(url)
            self._sites.add(site)
            if self.kind == "prefix":
                path = url_path(url)
                self._prefixes.setdefault(site, []).append(path[: path.rfind("/") + 1])
            elif self.kind == "domain":
                hostname, port = _split_port(site)
                self._domains.add(registrable_domain(hostname) + port)
        for site, directories in self._prefixes.items():
            ordered = sorted(set(directories))  # a directory sorts before those inside it
            kept: list[str] = []
            for directory in ordered:
                if not any(directory.startswith(outer) for outer in kept):
                    kept.append(directory)
            self._prefixes[site] = kept

    @property
    def site(self) -> str:
        """The first start URL's ``host[:port]`` without ``www.``."""
        return _site(self._starts[0])

    @property
    def start_urls(self) -> tuple[str, ...]:
        return tuple(self._starts)

    def retarget(self, start_url: str, final_url: str, *, kind: ScopeKind | None = None) -> None:
        """Put ``final_url`` (where ``start_url`` redirected) in the place of ``start_url``;
        with ``kind``, the scope kind changes too."""
        self._starts = list(
            dict.fromkeys(final_url if url == start_url else url for url in self._starts)
        )
        self.reaim(kind or self.kind)

    def reaim(self, kind: ScopeKind) -> None:
        """The same start URLs, another kind of scope."""
        self.kind = kind
        self._index()

    def contains(self, href: str) -> bool:
        site = _site(href)
        kind = self.kind
        if kind == "site":
            return site in self._sites
        if kind == "prefix":
            directories = self._prefixes.get(site)
            if directories is None:
                return False
            path = url_path(href)
            return any(path.startswith(directory) for directory in directories)
        if kind == "subdomains":
            sites = self._sites
            if site in sites:
                return True
            hostname, port = _split_port(site)
            dot = hostname.find(".")
            while dot >= 0:
                hostname = hostname[dot + 1 :]
                if hostname + port in sites:
                    return True
                dot = hostname.find(".")
            return False
        hostname, port = _split_port(site)
        return registrable_domain(hostname) + port in self._domains

    def holds_host(self, href: str) -> bool:
        """True when ``href``'s host (and port) is one of the scope's, whatever its path: where
        the crawl's credentials may be sent."""
        if self.kind == "prefix":
            return _site(href) in self._sites
        return self.contains(href)

    def describe(self) -> str:
        """For the summary line: ``prefix 127.0.0.1:8000/book/``."""
        if self.kind == "prefix":
            parts = [site + d for site, dirs in self._prefixes.items() for d in dirs]
        elif self.kind == "domain":
            parts = sorted(self._domains)
        elif self.kind == "subdomains":
            parts = ["*." + site for site in dict.fromkeys(map(_site, self._starts))]
        else:
            parts = list(dict.fromkeys(map(_site, self._starts)))
        shown = ", ".join(parts[:3])
        if len(parts) > 3:
            shown += f" and {len(parts) - 3:,} more"
        return f"{self.kind} {shown}"
