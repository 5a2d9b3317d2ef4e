"""The whole sitecrawl error tree.

::

    SitecrawlError                 root: catch this to catch everything sitecrawl raises
    ├── InvalidURL                 a URL that cannot be parsed or is not http(s) (also a ValueError)
    ├── ConfigError                a bad option value (also a ValueError)
    │   ├── MissingExtra           an optional dependency is not installed; carries ``extra=``
    │   │                          (its message names the ``pip install`` command)
    │   ├── OptionError            sitecrawl.serve: a crawl option an API caller gave that it
    │   │                          cannot use (400); carries ``option=``
    │   └── HostNotAllowed         sitecrawl.serve: a URL ``--allow-hosts`` refuses (403)
    ├── CrawlNotFound, CrawlConflict, BadRequest
    │                              sitecrawl.serve: no such crawl (404), not in a status that
    │                              allows it (409), a request it cannot read (400)
    ├── StateError                 a crawl state file sitecrawl cannot use: corrupt, locked by a
    │   │                          running crawl, not a sitecrawl file, a newer schema, made for
    │   │                          another site; carries ``path=``
    │   └── ResumeRefused          a resumed or joined crawl given other rules, extraction
    │                              rules or rendering than it began with, or not given its
    │                              credentials again (:mod:`sitecrawl.frontier._stored`)
    ├── ParseError                 parse                  a fetched body the HTML parser could
    │   │                                                 not read, or whose parse and
    │   │                                                 extraction rules passed the parse
    │   │                                                 deadline; carries ``url=``
    │   ├── RenderError            render                 headless Chromium could not render
    │   │                                                 the page (the raw HTML's fields stay)
    │   ├── PdfEncrypted           pdf_encrypted          a PDF that needs a password to be read
    │   └── PdfBroken              pdf_broken             a body served as PDF that PDFium
    │                                                     cannot open or read
    └── FetchError                 fetch                  one page could not be fetched (or only
        │                                                 in part); carries ``url=``, ``status=``
        ├── HTTPStatusError        http_status            the server answered with status >= 400
        ├── NotHTMLError           not_html               the body is not HTML; carries
        │                                                 ``content_type=``
        ├── BodyTooLarge           too_large              the body was cut at ``Limits.max_bytes``
        │                                                 (the page keeps what was read), or a
        │                                                 PDF is over ``Limits.max_pdf_bytes``
        │                                                 (not read)
        ├── FetchTimeout           timeout                connect or total timeout
        ├── ConnectError           connect                refused or reset connection, TLS failure
        │   ├── DNSError           dns                    the host name does not resolve
        │   └── TLSError           tls                    the server's TLS certificate was not
        │                                                 accepted (unknown CA, expired, another
        │                                                 name): see ``--ca-bundle``
        ├── BlockedAddress         blocked_address        not connected: the host's address is
        │                                                 link-local, or of a more private class
        │                                                 than the start URLs'; carries ``address=``
        ├── TooManyRedirects       too_many_redirects     more hops than ``Limits.max_redirects``
        │   └── RedirectLoop       redirect_loop          a redirect back to a URL of its chain
        ├── RedirectOutOfScope     redirect_out_of_scope  a redirect leaves the crawl's scope (or
        │                                                 http/https); carries ``location=``
        ├── BlockedByRobots        blocked_robots         robots.txt disallows the URL
        │   └── RobotsUnreachable  robots_unreachable     the host's robots.txt answered 5xx or
        │                                                 could not be reached: disallow for now
        └── ProtocolError          protocol               a malformed response the client could
                                                          not read

The middle column is each class's :attr:`~FetchError.kind`: a stable name for the failure, which
a page record keeps in ``error_kind`` beside ``error``, the short ``str()`` of the exception for
people to read. Code compares kinds (``page.error_kind == RedirectOutOfScope.kind``), never the
message. :data:`ERROR_KINDS` maps every kind to its class. Every exception keeps keyword context
(``url``, ``status``, ...).
"""

from __future__ import annotations

from typing import ClassVar, Self


class SitecrawlError(Exception):
    """Base class of every error sitecrawl raises."""


class InvalidURL(SitecrawlError, ValueError):
    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class ConfigError(SitecrawlError, ValueError):
    """An option has a value sitecrawl cannot use."""


class MissingExtra(ConfigError):
    """A feature needs an optional dependency that is not installed: ``extra`` names the
    extra (``pip install 'sitecrawl[<extra>]'``, which the message says)."""

    def __init__(self, message: str, *, extra: str) -> None:
        super().__init__(message)
        self.extra = extra


class ParseError(SitecrawlError):
    """Parsing one page failed; the page is recorded with this error, the crawl goes on."""

    kind: ClassVar[str] = "parse"

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class RenderError(ParseError):
    """Rendering one page in headless Chromium failed (timeout, crash after one retry); the
    page keeps the fields of its raw HTML."""

    kind: ClassVar[str] = "render"


class PdfEncrypted(ParseError):
    """A PDF that cannot be read without its user password (one with only an owner password,
    which restricts printing or copying, is read)."""

    kind: ClassVar[str] = "pdf_encrypted"


class PdfBroken(ParseError):
    """A body served as a PDF that PDFium cannot open or read (not a PDF, damaged beyond
    repair)."""

    kind: ClassVar[str] = "pdf_broken"


class StateError(SitecrawlError):
    """The state file at ``path`` cannot be used; it was left as it was."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class ResumeRefused(StateError):
    """A run of a stored crawl (a resume, a worker joining) was given another aim than the
    crawl began with, or lacks its credentials; ``path`` names the state file or Redis crawl.
    Nothing was fetched."""


class FetchError(SitecrawlError):
    """``status`` is the last HTTP status seen, when a response arrived at all."""

    #: The failure's stable name, recorded as a page's ``error_kind`` (see the tree above).
    kind: ClassVar[str] = "fetch"
    #: True when no connection to the host was made at all, so that every URL of its origin
    #: would fail alike (:class:`ConnectError` when so, :class:`BlockedAddress`).
    unreached: bool = False

    def __init__(self, message: str, *, url: str, status: int | None = None) -> None:
        super().__init__(message)
        self.url = url
        self.status = status

    def for_url(self, url: str) -> Self:
        """The same failure, said of ``url`` (a host's failure, for another URL of the host)."""
        clone = type(self).__new__(type(self), *self.args)
        clone.__dict__.update(self.__dict__)
        clone.url = url
        return clone


class HTTPStatusError(FetchError):
    kind = "http_status"

    def __init__(self, message: str, *, url: str, status: int) -> None:
        super().__init__(message, url=url, status=status)


class NotHTMLError(FetchError):
    kind = "not_html"

    def __init__(self, message: str, *, url: str, status: int, content_type: str | None) -> None:
        super().__init__(message, url=url, status=status)
        self.content_type = content_type


class BodyTooLarge(FetchError):
    """The body went past the size cap; what was read up to it is kept and parsed."""

    kind = "too_large"


class FetchTimeout(FetchError):
    kind = "timeout"


class ConnectError(FetchError):
    """``unreached``: no connection to the host could be made at all (the name did not
    resolve, the connection was refused, the TLS handshake failed); False when a connection
    was made and then lost."""

    kind = "connect"

    def __init__(
        self, message: str, *, url: str, status: int | None = None, unreached: bool = False
    ) -> None:
        super().__init__(message, url=url, status=status)
        self.unreached = unreached


class DNSError(ConnectError):
    kind = "dns"


class TLSError(ConnectError):
    """The server's TLS certificate was not accepted (signed by a CA the crawl does not trust,
    expired, for another name): no request was sent. ``CrawlConfig.ca_bundle`` (``--ca-bundle``)
    or ``SSL_CERT_FILE`` names the CAs to trust."""

    kind = "tls"


class BlockedAddress(FetchError):
    """Not connected: ``address`` (what the host resolved to) is link-local (the cloud metadata
    address 169.254.169.254, fe80::/10) or of a more private class than the start URLs'
    (public < private < loopback), and only the start URLs given may go there (or, for the
    class rule, ``CrawlConfig.allow_private_redirects``)."""

    kind = "blocked_address"
    unreached = True

    def __init__(self, message: str, *, url: str, address: str) -> None:
        super().__init__(message, url=url)
        self.address = address


class TooManyRedirects(FetchError):
    kind = "too_many_redirects"


class RedirectLoop(TooManyRedirects):
    kind = "redirect_loop"


class RedirectOutOfScope(FetchError):
    kind = "redirect_out_of_scope"

    def __init__(self, message: str, *, url: str, status: int, location: str) -> None:
        super().__init__(message, url=url, status=status)
        self.location = location


class BlockedByRobots(FetchError):
    """Not fetched: robots.txt forbids it (``str()`` is ``blocked by robots.txt``)."""

    kind = "blocked_robots"


class RobotsUnreachable(BlockedByRobots):
    """Not fetched: the host's robots.txt answered 5xx or could not be reached, which means
    disallow for now."""

    kind = "robots_unreachable"


class ProtocolError(FetchError):
    kind = "protocol"


def _kinds() -> dict[str, type[FetchError | ParseError]]:
    found: dict[str, type[FetchError | ParseError]] = {}

    def walk(cls: type[FetchError | ParseError]) -> None:
        found[cls.kind] = cls
        for sub in cls.__subclasses__():
            walk(sub)

    walk(ParseError)
    walk(FetchError)
    return found


#: Every error kind -> its exception class, in the order of the tree above.
ERROR_KINDS: dict[str, type[FetchError | ParseError]] = _kinds()
