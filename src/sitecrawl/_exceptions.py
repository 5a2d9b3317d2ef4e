"""The whole sitecrawl error tree.

::

    SitecrawlError                 root: catch this to catch everything sitecrawl raises
    ├── InvalidURL                 a URL that cannot be parsed or is not http(s) (also a ValueError)
    ├── ConfigError                a bad option value (also a ValueError)
    ├── StateError                 a crawl state file sitecrawl cannot use: corrupt, locked by a
    │                              running crawl, not a sitecrawl file, a newer schema, made for
    │                              another site; carries ``path=``
    ├── ParseError                 a fetched body the HTML parser could not read; carries ``url=``
    └── FetchError                 one page could not be fetched; carries ``url=``
        ├── HTTPStatusError        the server answered with status >= 400; carries ``status=``
        ├── NotHTMLError           the body is not HTML; carries ``content_type=``
        ├── FetchTimeout           connect or total timeout
        ├── ConnectError           DNS, refused or reset connection, TLS failure
        ├── TooManyRedirects       more hops than allowed, or a redirect loop
        ├── RedirectOutOfScope     a redirect leaves the crawl's scope (or http/https)
        ├── BlockedByRobots        robots.txt disallows the URL, or is unreachable (5xx)
        └── ProtocolError          a malformed response the client could not read

Every exception keeps keyword context (``url``, ``status``, ...) and a short ``str()`` fit to be
stored in a page record's ``error`` field.
"""

from __future__ import annotations


class SitecrawlError(Exception):
    """Base class of every error sitecrawl raises."""


class InvalidURL(SitecrawlError, ValueError):
    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class ConfigError(SitecrawlError, ValueError):
    """An option has a value sitecrawl cannot use."""


class ParseError(SitecrawlError):
    """Parsing one page failed; the page is recorded with this error, the crawl goes on."""

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class StateError(SitecrawlError):
    """The state file at ``path`` cannot be used; it was left as it was."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class FetchError(SitecrawlError):
    """``status`` is the last HTTP status seen, when a response arrived at all."""

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status


class HTTPStatusError(FetchError):
    def __init__(self, message: str, *, url: str, status: int) -> None:
        super().__init__(message, url=url, status=status)


class NotHTMLError(FetchError):
    def __init__(self, message: str, *, url: str, status: int, content_type: str | None) -> None:
        super().__init__(message, url=url, status=status)
        self.content_type = content_type


class FetchTimeout(FetchError):
    pass


class ConnectError(FetchError):
    pass


class TooManyRedirects(FetchError):
    pass


class RedirectOutOfScope(FetchError):
    def __init__(self, message: str, *, url: str, status: int, location: str) -> None:
        super().__init__(message, url=url, status=status)
        self.location = location


class BlockedByRobots(FetchError):
    """Not fetched: robots.txt forbids it (``str()`` is ``blocked by robots.txt``), or the
    host's robots.txt answered 5xx / could not be reached, which means disallow for now."""


class ProtocolError(FetchError):
    pass
