"""What a crawl sends besides its requests' URLs: headers, cookies, auth and proxies
(:class:`Requests`, a section of :class:`~sitecrawl.CrawlConfig`). Its credentials go only to
the crawl's own hosts and are never printed nor stored with a crawl (:meth:`Requests.shape`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._exceptions import ConfigError
from ._settings import LibraryOnly, flag, setting

_FROM_ENVIRONMENT = LibraryOnly(
    "the command line reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY from the environment"
    " (unless --proxy is given)"
)
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


@dataclass(frozen=True, kw_only=True, slots=True)
class Requests:
    """What the crawl sends besides its requests' URLs, and how they go out.

    ``headers`` (``(name, value)`` pairs), ``cookies`` (``(name, value)`` pairs, for every
    host of the crawl), the cookies of ``cookie_file`` (a Netscape cookies.txt, each for its
    own domain) and ``auth`` (``(user, password)``, HTTP Basic) are credentials: they go only
    to the hosts of the crawl's scope, decided per request by its URL's host (never to an
    external link, another host's robots.txt, or a redirect off the site). ``keep_cookies``:
    the cookies those hosts set are kept for the crawl, per host, as a browser keeps them.
    ``proxy`` (http:// or https://) carries every request; else ``http_proxy`` carries
    http:// URLs and ``https_proxy`` https:// ones, except to the hosts of ``no_proxy``
    (``NO_PROXY``'s syntax: names, ``.suffix``, ``*``). The values are never printed
    (``repr``) nor stored with a crawl (:meth:`shape`)."""

    headers: tuple[tuple[str, str], ...] = setting(
        (),
        flag(
            "-H",
            "--header",
            kind="append",
            metavar="'NAME: VALUE'",
            help="send this header (repeatable)",
            custom=True,
        ),
        repr=False,
    )
    cookies: tuple[tuple[str, str], ...] = setting(
        (),
        flag(
            "--cookie",
            kind="append",
            metavar="NAME=VALUE",
            help="send this cookie (repeatable)",
            custom=True,
        ),
        repr=False,
    )
    cookie_file: str | None = setting(
        None,
        flag(
            "--cookies",
            metavar="FILE",
            help="send the cookies of FILE (Netscape cookies.txt, as curl and wget read)",
            custom=True,
        ),
    )
    auth: tuple[str, str] | None = setting(
        None,
        flag(
            "--auth",
            metavar="USER[:PASSWORD]",
            help="HTTP Basic auth; without :PASSWORD, the password is read from"
            " SITECRAWL_PASSWORD (or asked for on a terminal)",
            custom=True,
        ),
        repr=False,
    )
    keep_cookies: bool = setting(
        True,
        flag(
            "--no-cookies",
            kind="false",
            help="do not keep the cookies the site sets (by default they are, as a browser does)",
            custom=True,
        ),
    )
    proxy: str | None = setting(
        None,
        flag(
            "--proxy",
            metavar="URL",
            help="send every request through this http(s) proxy (default: HTTP_PROXY,"
            " HTTPS_PROXY and NO_PROXY from the environment)",
            custom=True,
        ),
        repr=False,
    )
    http_proxy: str | None = setting(None, _FROM_ENVIRONMENT, repr=False)
    https_proxy: str | None = setting(None, _FROM_ENVIRONMENT, repr=False)
    no_proxy: tuple[str, ...] = setting((), _FROM_ENVIRONMENT)

    def __post_init__(self) -> None:
        for name, value in self.headers:
            if not _TOKEN.fullmatch(name):
                raise ConfigError(f"not a header name: {name!r}")
            if "\r" in value or "\n" in value:
                raise ConfigError(f"header {name} has a line break in its value")
        for name, value in self.cookies:
            if not _TOKEN.fullmatch(name) or any(c in value for c in ";\r\n"):
                raise ConfigError(f"not a cookie name=value: {name!r}")
        if self.auth is not None:
            if ":" in self.auth[0] or not self.auth[0]:
                raise ConfigError("an HTTP Basic user name is not empty and has no ':'")
            if any(name.lower() == "authorization" for name, _ in self.headers):
                raise ConfigError("give auth or an Authorization header, not both")
        for proxy in (self.proxy, self.http_proxy, self.https_proxy):
            if proxy is not None and not proxy.lower().startswith(("http://", "https://")):
                raise ConfigError("a proxy is an http:// or https:// URL")

    def shape(self) -> dict[str, Any]:
        """What a crawl stores of these: which credentials were given, never their values."""
        return {
            "headers": sorted({name.lower() for name, _ in self.headers}),
            "cookies": sorted({name for name, _ in self.cookies}),
            "cookie_file": self.cookie_file is not None,
            "auth": self.auth is not None,
            "keep_cookies": self.keep_cookies,
        }

    def missing(self, shape: dict[str, Any] | None) -> list[str]:
        """The credentials a crawl stored as given (its :meth:`shape`) that these lack, as
        the command-line options that give them."""
        if not shape:
            return []
        have = self.shape()
        headers = [name for name in shape.get("headers", ()) if name not in have["headers"]]
        cookies = [name for name in shape.get("cookies", ()) if name not in have["cookies"]]
        lost = [f"-H '{name}: ...'" for name in headers]
        lost += [f"--cookie {name}=..." for name in cookies]
        if shape.get("cookie_file") and not have["cookie_file"]:
            lost.append("--cookies FILE")
        if shape.get("auth") and not have["auth"]:
            lost.append("--auth USER (password: USER:PASSWORD or SITECRAWL_PASSWORD)")
        return lost
