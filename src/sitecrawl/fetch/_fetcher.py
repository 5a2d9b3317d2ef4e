"""HTTP: the only module that imports aiohttp. One session per crawl; its errors become ours.

:meth:`Fetcher.get` is one request, one hop: a redirect comes back as a response with a
``location``, so the caller can check every hop against scope, robots.txt and the host's
politeness slot before requesting it (aiohttp's own redirect handling would fetch first and
ask later). :class:`RedirectTrail` is that check's scope/loop/count part, under a
:class:`FollowPolicy` its caller chooses (the fetcher knows no caller's limits). A URL goes out
exactly as given (a WHATWG href: aiohttp does not re-quote it), so the URL requested is the
URL recorded. Bodies are read up to a cap on the *decoded* size (gzip, deflate, br and zstd
are accepted), so a compression bomb cannot blow memory; a body that is not HTML is not read
at all (its connection is closed: only what the socket had buffered arrived), but for a PDF
when its caller reads PDFs (``pdf_bytes``: then up to that many bytes, and not at all when
its ``Content-Length`` says it is larger).

Credentials (:class:`~sitecrawl.Requests`' headers, cookies, auth, and the cookies the crawl's
hosts set) are decided here, per request, by the target URL's host: they go with a request
only when ``trusted(url)`` (the crawl's scope: :meth:`CrawlScope.holds_host`) says its host
is one of the crawl's, so no caller can leak them to an external link, another host's
robots.txt or across a redirect off the site.

Where a request may connect is the :class:`~._addresses.AddressGuard`'s decision, made on the
addresses a host resolves to (:class:`GuardedResolver`, once per DNS lookup) or on an address
literal (once per address): never into link-local addresses (the cloud metadata service), nor
into a more private class of address than the start URLs', unless allowed. Behind a proxy, the
proxy resolves the names: only address literals are checked then.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.cookies import BaseCookie, SimpleCookie
from types import TracebackType
from typing import TypedDict

import aiohttp
from aiohttp.abc import AbstractCookieJar, AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from aiohttp.typedefs import LooseCookies
from yarl import URL

from .._config import CrawlConfig
from .._config_requests import Requests
from .._exceptions import (
    BlockedAddress,
    ConnectError,
    DNSError,
    FetchError,
    FetchTimeout,
    ProtocolError,
    TLSError,
)
from .._tls import tls_context
from ..control import CrawlScope
from ._addresses import AddressGuard, is_address
from ._exchange import Exchange, Recorder
from ._session import Proxies, basic_auth, load_cookie_file

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ACCEPT = "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"
_CHUNK = 1 << 16
# aiohttp >= 3.10 says when a name did not resolve; before, its os_error is a gaierror.
_DNS_ERRORS: tuple[type[Exception], ...] = tuple(
    filter(None, [getattr(aiohttp, "ClientConnectorDNSError", None)])
)
#: OpenSSL's words for a TLS handshake answered in plain HTTP (by version: 1.1 and 3.0, 3.2+).
_NOT_TLS = frozenset(
    {"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG", "UNKNOWN_PROTOCOL"}
)


class GetOptions(TypedDict, total=False):
    """The keywords of :meth:`Fetcher.get` beside the URL (what a caller passes on)."""

    read_any: bool
    max_bytes: int | None
    method: str
    extra_headers: Mapping[str, str] | None
    data: bytes | None
    pdf_bytes: int | None


@dataclass(slots=True)
class Response:
    """One fetched URL, one hop: a redirect has a ``location``. ``body`` is None when it was
    not read (not HTML, a redirect, a HEAD request)."""

    url: str
    status: int
    content_type: str | None
    charset: str | None
    body: bytes | None
    elapsed_ms: float
    size_bytes: int | None
    truncated: bool = False
    location: str | None = None
    retry_after: str | None = None
    robots_tag: str | None = None
    ttfb_ms: float = 0.0  # time to response headers: the server's latency, body excluded
    set_cookie: bool = False  # a Set-Cookie header came, and the crawl keeps this host's
    etag: str | None = None
    last_modified: str | None = None
    link: str | None = None  # the Link headers, joined (hreflang alternates: ._alternates)

    @property
    def is_html(self) -> bool:
        return self.content_type is None or self.content_type in HTML_TYPES

    @property
    def is_pdf(self) -> bool:
        return self.content_type in PDF_TYPES


@dataclass(frozen=True, slots=True)
class FollowPolicy:
    """How a redirect chain is followed and how much of its answer is read: hops inside
    ``scope`` (None: to any http(s) host), at most ``max_redirects`` of them; the body of any
    content type up to ``max_bytes`` decoded bytes (None: HTML bodies only, up to
    ``Limits.max_bytes``, and PDF bodies up to ``pdf_bytes`` when that is given)."""

    scope: CrawlScope | None
    max_redirects: int
    max_bytes: int | None = None
    pdf_bytes: int | None = None


@contextmanager
def _map_errors(url: str) -> Iterator[None]:
    """Translate aiohttp and asyncio failures into sitecrawl's errors, once, here."""
    try:
        yield
    except BlockedAddress as exc:  # raised by the resolver, which knows the host, not the URL
        raise exc.for_url(url) from None
    except FetchError:
        raise
    except TimeoutError as exc:
        raise FetchTimeout("timeout", url=url) from exc
    except aiohttp.ClientConnectorCertificateError as exc:
        why = f"TLS certificate of {exc.host} not accepted: {exc.certificate_error}"
        raise TLSError(why, url=url, unreached=True) from exc
    except aiohttp.ClientConnectorError as exc:
        raise _unreached(exc, url) from exc
    except aiohttp.ServerDisconnectedError as exc:
        raise ConnectError("server disconnected", url=url) from exc
    except aiohttp.ClientOSError as exc:
        raise ConnectError(f"connection error: {exc.strerror or exc}", url=url) from exc
    except (aiohttp.ClientPayloadError, aiohttp.ClientResponseError) as exc:
        raise ProtocolError(f"bad response: {exc}", url=url) from exc
    except aiohttp.ClientError as exc:
        raise ConnectError(f"request failed: {exc}", url=url) from exc
    except (UnicodeError, ValueError) as exc:
        raise ProtocolError(f"bad response: {exc}", url=url) from exc


def _unreached(exc: aiohttp.ClientConnectorError, url: str) -> ConnectError:
    """No connection to the host was made: why, in the words a person would use."""
    error = exc.os_error
    where = f"{exc.host}:{exc.port}"
    if isinstance(exc, _DNS_ERRORS) or isinstance(error, socket.gaierror):
        why = f" ({error.strerror})" if error is not None and error.strerror else ""
        return DNSError(f"could not resolve host {exc.host}{why}", url=url, unreached=True)
    if isinstance(error, ssl.SSLError) and error.reason in _NOT_TLS and url.startswith("https:"):
        port = "" if exc.port == 443 else f":{exc.port}"
        plain = f"http://{URL(url, encoded=True).host_subcomponent}{port}/"
        message = f"the server does not speak TLS; did you mean {plain}?"
    elif isinstance(error, ConnectionRefusedError):
        message = f"connection refused ({where})"
    else:
        message = f"connection failed ({where}): {error.strerror or error}" if error else str(exc)
    return ConnectError(message, url=url, unreached=True)


#: ``url -> bool``: may the crawl's credentials go to ``url``'s host?
TrustCheck = Callable[[str], bool]
_NO_URL = URL()


class ScopedCookieJar(aiohttp.CookieJar):
    """A browser's cookie jar (per host, path, expiry, Secure) that only the crawl's own hosts
    see: requests to other hosts carry none of its cookies and what those hosts set is not
    kept; with ``keep=False``, nothing any host sets is kept (only the cookies given)."""

    def __init__(self, trusted: TrustCheck, *, keep: bool) -> None:
        super().__init__(unsafe=True)  # unsafe: cookies of IP-address hosts too
        self._trusted = trusted
        self._keep = keep

    def give(self, cookies: LooseCookies, *, url: URL | None = None) -> None:
        """Cookies the user gave: for every trusted host, or for ``url``'s domain."""
        super().update_cookies(cookies, _NO_URL if url is None else url)

    def _trusts(self, url: URL) -> bool:
        return bool(url.raw_host) and self._trusted(str(url))

    def update_cookies(self, cookies: LooseCookies, response_url: URL = _NO_URL) -> None:
        if self._keep and self._trusts(response_url):
            super().update_cookies(cookies, response_url)

    def update_cookies_from_headers(self, headers: Sequence[str], response_url: URL) -> None:
        if self._keep and self._trusts(response_url):
            super().update_cookies_from_headers(headers, response_url)

    def filter_cookies(self, request_url: URL = _NO_URL) -> BaseCookie[str]:
        cookies = super().filter_cookies(request_url)  # quick when the jar is empty
        if cookies and not self._trusts(request_url):
            return BaseCookie()
        return cookies


class GuardedResolver(AbstractResolver):
    """The system's resolver, whose answers pass the crawl's :class:`AddressGuard` first: a
    host resolves only to the addresses it may be connected to, or raises
    :class:`BlockedAddress`. Called once per DNS lookup (the connector caches the answers)."""

    def __init__(self, guard: AddressGuard) -> None:
        self.guard = guard
        self._resolver = DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        found = await self._resolver.resolve(host, port, family)
        addresses = [result["host"] for result in found]
        await self.settle(self.guard.unsettled(host, addresses))
        allowed = set(self.guard.admit(host, addresses))
        return [result for result in found if result["host"] in allowed]

    async def settle(self, hosts: Sequence[str]) -> None:
        """Resolve the start ``hosts`` not resolved yet and tell the guard (a host that does
        not resolve counts as resolved to nothing)."""
        for host in hosts:
            addresses = [host]
            if not is_address(host):
                try:
                    found = await self._resolver.resolve(host, 0, socket.AF_UNSPEC)
                except OSError:
                    found = []
                addresses = [result["host"] for result in found]
            self.guard.settle(host, addresses)

    async def admit_literal(self, host: str) -> None:
        """Check an address literal, which the connector never resolves."""
        await self.settle(self.guard.unsettled(host, [host]))
        self.guard.admit(host, [host])

    async def close(self) -> None:
        await self._resolver.close()


def _cookie_jar(requests: Requests, trusted: TrustCheck) -> AbstractCookieJar:
    if not (requests.keep_cookies or requests.cookies or requests.cookie_file):
        return aiohttp.DummyCookieJar()
    jar = ScopedCookieJar(trusted, keep=requests.keep_cookies)
    if requests.cookies:
        jar.give(dict(requests.cookies))
    if requests.cookie_file is not None:
        for cookie in load_cookie_file(requests.cookie_file):
            host = cookie.domain.lstrip(".")
            given: SimpleCookie = SimpleCookie()
            given[cookie.name] = cookie.value or ""
            morsel = given[cookie.name]
            morsel["path"] = cookie.path or "/"
            if cookie.domain_initial_dot:  # the domain and its subdomains; else the host only
                morsel["domain"] = host
            if cookie.secure:
                morsel["secure"] = True
            scheme = "https" if cookie.secure else "http"
            jar.give(given, url=URL.build(scheme=scheme, host=host, path=morsel["path"]))
    return jar


class Fetcher:
    """One HTTP session, one hop a request. Use as ``async with Fetcher(config) as fetcher``;
    where a redirect may lead is its callers' decision (:class:`RedirectTrail`), where the
    crawl's credentials may go is ``trusted``'s (None: nowhere)."""

    def __init__(self, config: CrawlConfig, *, trusted: TrustCheck | None = None) -> None:
        self._config = config
        self._trusted: TrustCheck = trusted or (lambda url: False)
        requests = config.requests
        headers = dict(requests.headers)
        if requests.auth is not None:
            headers["Authorization"] = basic_auth(*requests.auth)
        self._headers = headers or None
        self._keep_cookies = requests.keep_cookies
        self._proxies = Proxies(requests)
        proxies = (requests.proxy, requests.http_proxy, requests.https_proxy)
        self._guard = AddressGuard(
            [URL(url, encoded=True).raw_host or "" for url in config.starts],
            allow_private=config.allow_private_redirects,
            exempt=[URL(proxy).raw_host or "" for proxy in proxies if proxy],
            public_only=config.public_only,
        )
        self._hosts: set[str] = set()  # names, and the address literals the guard admitted
        self._resolver: GuardedResolver | None = None
        self.session: aiohttp.ClientSession | None = None
        #: Called with every exchange (a WARC archive); None: no exchange is even built.
        self.recorder: Recorder | None = None

    async def __aenter__(self) -> Fetcher:
        limits, timeouts = self._config.limits, self._config.timeouts
        jar = _cookie_jar(self._config.requests, self._trusted)
        self._resolver = GuardedResolver(self._guard)
        connector = aiohttp.TCPConnector(
            limit=limits.max_concurrency,
            limit_per_host=0,
            ttl_dns_cache=300,
            resolver=self._resolver,
            # (aiohttp's own default context, made once, when no CA bundle is given)
            ssl=True if self._config.ca_bundle is None else tls_context(self._config.ca_bundle),
        )
        self.session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=timeouts.total, connect=timeouts.connect),
            headers={"User-Agent": self._config.user_agent, "Accept": _ACCEPT},
            cookie_jar=jar,
            raise_for_status=False,
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None

    async def get(
        self,
        url: str,
        *,
        read_any: bool = False,
        max_bytes: int | None = None,
        method: str = "GET",
        extra_headers: Mapping[str, str] | None = None,
        data: bytes | None = None,
        pdf_bytes: int | None = None,
    ) -> Response:
        """One GET (or ``method="HEAD"``) of ``url``, no redirect following. The body is read
        (up to ``max_bytes`` decoded bytes, default ``Limits.max_bytes``) when it is HTML, or
        always with ``read_any``; a PDF's up to ``pdf_bytes`` when that is given (one whose
        ``Content-Length`` is larger is not read: ``truncated``, without a body).
        ``extra_headers`` are sent with this request only (a conditional request's); ``data``
        is its body (a rendered page's POST or PUT). Raises a :class:`~sitecrawl.FetchError`
        subclass when no usable response arrives."""
        if self.session is None:
            raise RuntimeError("Fetcher used outside 'async with'")
        cap = self._config.limits.max_bytes if max_bytes is None else max_bytes
        started = time.perf_counter()
        recorder = self.recorder
        wall = time.time() if recorder is not None else 0.0
        with _map_errors(url):
            # encoded=True: the URL is a WHATWG href, escaped as the page wrote it; aiohttp
            # would otherwise re-quote it (``?x=%2F`` becomes ``?x=/``, another URL).
            target = URL(url, encoded=True)
            host = target.raw_host
            if host is not None and host not in self._hosts:
                if is_address(host):  # the resolver never sees an address literal
                    assert self._resolver is not None
                    await self._resolver.admit_literal(host)
                self._hosts.add(host)  # a refusal is decided again: starts may resolve
            extra = self._headers if self._headers and self._trusted(url) else None
            if extra_headers:
                extra = {**(extra or {}), **extra_headers}
            proxy_url, proxy_headers = None, None
            if self._proxies.any and (proxy := self._proxies.for_url(target)) is not None:
                proxy_url, proxy_headers = proxy
                if proxy_headers and target.scheme == "http":
                    # aiohttp sends proxy_headers with a CONNECT only (https): an http://
                    # request goes to the proxy itself, its Proxy-Authorization with it.
                    extra, proxy_headers = {**(extra or {}), **proxy_headers}, None
            async with self.session.request(
                method,
                target,
                allow_redirects=False,
                headers=extra,
                data=data,
                proxy=proxy_url,
                proxy_headers=proxy_headers,
            ) as resp:
                headers = resp.headers
                status = resp.status
                location = headers.get("Location") if status in _REDIRECTS else None
                response = Response(
                    url=url,
                    status=status,
                    content_type=resp.content_type if "Content-Type" in headers else None,
                    charset=resp.charset,
                    body=None,
                    elapsed_ms=0.0,
                    size_bytes=resp.content_length,
                    location=location or None,
                    retry_after=headers.get("Retry-After"),
                    robots_tag="\n".join(headers.getall("X-Robots-Tag", [])) or None,
                    ttfb_ms=round((time.perf_counter() - started) * 1000, 2),
                    set_cookie=self._keep_cookies
                    and "Set-Cookie" in headers
                    and self._trusted(url),
                    etag=headers.get("ETag"),
                    last_modified=headers.get("Last-Modified"),
                    link=", ".join(headers.getall("Link", [])) or None,
                )
                peer = _peer(resp) if recorder is not None else None  # before the body is read
                if response.location is None and method != "HEAD":
                    read_cap = cap if read_any or response.is_html else None
                    if read_cap is None and pdf_bytes and response.is_pdf:
                        if (response.size_bytes or 0) > pdf_bytes:
                            response.truncated = True  # declared larger: not read at all
                        else:
                            read_cap = pdf_bytes
                    if read_cap is not None:
                        response.body, response.truncated = await _read_capped(resp, read_cap)
                        response.size_bytes = len(response.body)
                if recorder is not None:
                    recorder(_exchange(resp, response, wall, data, peer))
        response.elapsed_ms = round((time.perf_counter() - started) * 1000, 2)
        return response


def _peer(resp: aiohttp.ClientResponse) -> str | None:
    """The address ``resp`` came from (not through a proxy's tunnel: the proxy's)."""
    transport = resp.connection.transport if resp.connection is not None else None
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if isinstance(peer, tuple) and peer else None


def _exchange(
    resp: aiohttp.ClientResponse,
    response: Response,
    started: float,
    data: bytes | None,
    peer: str | None,
) -> Exchange:
    """What went over the wire for ``response`` (:mod:`._exchange`), in plain types."""
    version = resp.version
    return Exchange(
        method=resp.method,
        url=response.url,
        started=started,
        request_headers=tuple(
            (str(name), str(value)) for name, value in resp.request_info.headers.items()
        ),  # (the names are multidict's istr: plain str, for marshal)
        request_body=data,
        version=f"{version.major}.{version.minor}" if version is not None else "1.1",
        status=resp.status,
        reason=resp.reason or "",
        response_headers=tuple(
            (name.decode("latin-1"), value.decode("latin-1")) for name, value in resp.raw_headers
        ),
        body=response.body,
        body_read=response.body is not None,
        truncated=response.truncated,
        peer=peer,
    )


async def _read_capped(resp: aiohttp.ClientResponse, cap: int) -> tuple[bytes, bool]:
    """Read at most ``cap`` decoded bytes; True in the second slot when the body was cut.

    aiohttp (3.13.3 and later) decodes gzip, deflate, br and zstd a bounded piece at a time
    as we read, so a compression bomb costs no more than the bytes kept: the chunks (the
    last one cut to the cap) and, at the end, the body joined from them."""
    length = resp.content_length
    if length is not None and length <= cap and "Content-Encoding" not in resp.headers:
        return await resp.read(), False
    chunks: list[bytes] = []
    total = 0
    while chunk := await resp.content.read(min(_CHUNK, cap + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > cap:
            resp.close()
            chunks[-1] = chunk[: len(chunk) - (total - cap)]
            return b"".join(chunks), True
    return b"".join(chunks), False
