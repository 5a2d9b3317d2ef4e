"""WARC 1.1 records from HTTP exchanges (:class:`~sitecrawl.fetch.Exchange`), through warcio.

Each exchange becomes a ``response`` record and a ``request`` record that names it in
``WARC-Concurrent-To``, with ``WARC-Target-URI``, ``WARC-Date`` (when the request was sent),
``WARC-IP-Address`` and block and payload digests (SHA-1, base 32, as warcio and pywb use).
A ``304`` becomes a ``revisit`` record (profile ``server-not-modified``) and a payload already
archived (same digest) a ``revisit`` (``identical-payload-digest``) naming the first copy in
``WARC-Refers-To-*``, instead of a second copy.

What the records hold, and why:

- The payload is the body as the crawler read it: aiohttp has undone the transfer and content
  codings. So that a replay tool reads the record as it is (pywb, ReplayWeb.page and
  ``warcio check`` all accept it), the headers say so: ``Content-Encoding`` and
  ``Transfer-Encoding`` are kept as ``X-Archive-Orig-Content-Encoding`` /
  ``X-Archive-Orig-Transfer-Encoding`` (pywb's own prefix for headers it must not apply), and
  ``Content-Length`` is the stored payload's (the server's, when it differed, as
  ``X-Archive-Orig-Content-Length``). A body cut at ``--max-bytes``, or not read (not HTML),
  is marked ``WARC-Truncated: length``.
- Credentials never reach the archive: a request's ``Authorization``, ``Cookie`` and
  ``Proxy-Authorization`` headers are dropped, and so is every header given with ``-H`` (its
  value may be a token: the state file keeps only its name, too); a response's
  ``Set-Cookie`` headers are dropped unless ``keep_cookies`` (``--archive-cookies``).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .._exceptions import MissingExtra

if TYPE_CHECKING:
    from ..fetch import Exchange

WARC_HINT = "pip install 'sitecrawl[warc]'"
#: Request headers never archived (lower case): the crawl's credentials.
SECRET_REQUEST_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
#: Content codings aiohttp undoes as it reads (the body archived is decoded).
_DECODED = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd", "identity"})
_ORIG = "X-Archive-Orig-"
_NO_BODY = frozenset({204, 304})


def import_warcio() -> Any:
    """The warcio module, or :class:`~sitecrawl.MissingExtra` naming the extra."""
    try:
        import warcio
        import warcio.statusandheaders
        import warcio.warcwriter
    except ImportError:
        raise MissingExtra(f"writing WARC needs warcio: {WARC_HINT}", extra="warc") from None
    return warcio


def warc_date(when: float) -> str:
    """``2026-12-03T13:36:36.123456Z``: WARC 1.1's date, to the microsecond."""
    moment = datetime.datetime.fromtimestamp(when, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def payload_digest(body: bytes) -> str:
    """``sha1:BASE32``: the payload digest warcio writes and pywb compares."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


@dataclass(frozen=True, slots=True)
class Capture:
    """Where a payload was first archived: what a revisit record refers to."""

    uri: str
    date: str
    record_id: str


def request_headers(
    headers: Iterable[tuple[str, str]], secret: Collection[str]
) -> list[tuple[str, str]]:
    """The request's headers less the credentials (names in ``secret``, lower case)."""
    return [(name, value) for name, value in headers if name.lower() not in secret]


def response_headers(
    exchange: Exchange, stored: int, *, keep_cookies: bool
) -> list[tuple[str, str]]:
    """The response's headers, in order, as they describe the ``stored`` payload bytes."""
    out: list[tuple[str, str]] = []
    length_ok = False
    for name, value in exchange.response_headers:
        low = name.lower()
        if low == "set-cookie" and not keep_cookies:
            continue
        if low == "transfer-encoding" or (
            low == "content-encoding" and value.strip().lower() in _DECODED
        ):
            out.append((_ORIG + name, value))
        elif low == "content-length":
            if value.strip() == str(stored) and not length_ok:
                length_ok = True
                out.append((name, value))
            else:
                out.append((_ORIG + name, value))
        else:
            out.append((name, value))
    if not length_ok:
        out.append(("Content-Length", str(stored)))
    return out


def is_truncated(exchange: Exchange) -> bool:
    """Whether the payload archived is less than the server sent."""
    if exchange.truncated:
        return True
    if exchange.body_read or exchange.method == "HEAD" or exchange.status in _NO_BODY:
        return False
    if exchange.status < 200:
        return False
    lengths = [v for n, v in exchange.response_headers if n.lower() == "content-length"]
    return not lengths or lengths[0].strip() != "0"


class RecordMaker:
    """Serializes records (uncompressed WARC bytes) with warcio; no I/O."""

    def __init__(self, *, keep_cookies: bool, secret_headers: Collection[str] = ()) -> None:
        warcio = import_warcio()
        self._sah = warcio.statusandheaders.StatusAndHeaders
        self._writer_class = warcio.warcwriter.WARCWriter
        self._buffer = BytesIO()
        self._writer = self._writer_class(self._buffer, gzip=False, warc_version="1.1")
        self.keep_cookies = keep_cookies
        self.secret = SECRET_REQUEST_HEADERS | {name.lower() for name in secret_headers}

    def _take(self, *records: Any) -> list[bytes]:
        """Each record's bytes."""
        out = []
        for record in records:
            self._buffer.seek(0)
            self._buffer.truncate()
            self._writer.write_record(record)
            out.append(self._buffer.getvalue())
        return out

    def warcinfo(self, filename: str, fields: dict[str, str]) -> bytes:
        record = self._writer.create_warcinfo_record(filename, fields)
        return self._take(record)[0]

    def exchange(
        self, exchange: Exchange, refers: Capture | None, digest: str | None
    ) -> tuple[list[bytes], str, str]:
        """The records of ``exchange``: response (or revisit) then request; the response's
        record id and date. ``refers``: the capture a revisit names (None: a full response
        unless a 304); ``digest``: the body's payload digest (None: no body)."""
        date = warc_date(exchange.started)
        body = exchange.body or b""
        sah = self._sah
        common: dict[str, str] = {"WARC-Date": date}
        if exchange.peer:
            common["WARC-IP-Address"] = exchange.peer
        revisit = exchange.status == 304 or refers is not None
        # a revisit's headers describe the payload it refers to (a replay serves that)
        stored = len(body)
        http = sah(
            f"{exchange.status} {exchange.reason}".rstrip(),
            response_headers(exchange, stored, keep_cookies=self.keep_cookies),
            protocol=f"HTTP/{exchange.version}",
        )
        warc_headers = dict(common)
        if revisit:
            if exchange.status == 304:
                warc_headers["WARC-Profile"] = (
                    "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
                )
            else:
                warc_headers["WARC-Profile"] = (
                    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
                )
                assert digest is not None
                warc_headers["WARC-Payload-Digest"] = digest
            if refers is not None:
                warc_headers["WARC-Refers-To-Target-URI"] = refers.uri
                warc_headers["WARC-Refers-To-Date"] = refers.date
                warc_headers["WARC-Refers-To"] = refers.record_id
            response = self._writer.create_warc_record(
                exchange.url, "revisit", http_headers=http, warc_headers_dict=warc_headers
            )
        else:
            if digest is not None:
                warc_headers["WARC-Payload-Digest"] = digest
            if is_truncated(exchange):
                warc_headers["WARC-Truncated"] = "length"
            response = self._writer.create_warc_record(
                exchange.url,
                "response",
                payload=BytesIO(body),
                length=len(body),
                http_headers=http,
                warc_headers_dict=warc_headers,
            )
        record_id = response.rec_headers.get_header("WARC-Record-ID")
        parts = urlsplit(exchange.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = exchange.request_body or b""
        request = self._writer.create_warc_record(
            exchange.url,
            "request",
            payload=BytesIO(sent),
            length=len(sent),
            http_headers=sah(
                f"{exchange.method} {target} HTTP/{exchange.version}",
                request_headers(exchange.request_headers, self.secret),
                is_http_request=True,
            ),
            warc_headers_dict={**common, "WARC-Concurrent-To": record_id},
        )
        return self._take(response, request), record_id, date
