"""WARC 1.1 records from HTTP exchanges (:class:`~sitecrawl.fetch.Exchange`).

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

import datetime
import hashlib
import time
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
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
HTTP_RESPONSE = "application/http; msgtype=response"
HTTP_REQUEST = "application/http; msgtype=request"
NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


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


_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
#: Every 10 bits as two base-32 digits (base64.b32encode is pure Python before 3.13).
_B32_PAIRS = [a + b for a in _B32 for b in _B32]


def sha1_digest(data: bytes) -> str:
    """``sha1:BASE32``: the digest warcio writes and pywb compares (160 bits: 32 digits)."""
    number = int.from_bytes(hashlib.sha1(data).digest(), "big")
    return "sha1:" + "".join(_B32_PAIRS[(number >> shift) & 1023] for shift in _SHIFTS)


_SHIFTS = range(150, -1, -10)
payload_digest = sha1_digest


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


def _fields(lines: Iterable[tuple[str, str]]) -> str:
    return "".join(f"{name}: {value}\r\n" for name, value in lines)


def record(kind: str, fields: list[tuple[str, str]], block: bytes, content_type: str) -> bytes:
    """One WARC 1.1 record: ``fields`` after ``WARC-Type``, then the block's digest, type and
    length, the block, and the two CRLFs that end a record."""
    head = (
        f"WARC/1.1\r\nWARC-Type: {kind}\r\n{_fields(fields)}"
        f"WARC-Block-Digest: {sha1_digest(block)}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(block)}\r\n\r\n"
    )
    return b"".join((head.encode("utf-8"), block, b"\r\n\r\n"))


def record_id() -> str:
    return f"<urn:uuid:{uuid.uuid4()}>"


class RecordMaker:
    """Serializes records (uncompressed WARC bytes); no I/O. Written here, not by warcio's
    writer, which took 1.7 times the CPU for a response and its request, digests included
    (bench/RESULTS.md section 23); warcio reads them back (recovery, the WACZ index, the
    tests' checks, digests included)."""

    def __init__(self, *, keep_cookies: bool, secret_headers: Collection[str] = ()) -> None:
        self.keep_cookies = keep_cookies
        self.secret = SECRET_REQUEST_HEADERS | {name.lower() for name in secret_headers}

    def warcinfo(self, filename: str, fields: dict[str, str]) -> bytes:
        block = _fields((name, value) for name, value in fields.items() if value).encode()
        head = [
            ("WARC-Record-ID", record_id()),
            ("WARC-Date", warc_date(time.time())),
            ("WARC-Filename", filename),
        ]
        return record("warcinfo", head, block, "application/warc-fields")

    def exchange(
        self, exchange: Exchange, refers: Capture | None, digest: str | None
    ) -> tuple[list[bytes], str, str]:
        """The records of ``exchange``: response (or revisit) then request; the response's
        record id and date. ``refers``: the capture a revisit names (None: a full response
        unless a 304); ``digest``: the body's payload digest (None: no body)."""
        date = warc_date(exchange.started)
        body = exchange.body or b""
        common = [("WARC-Date", date), ("WARC-Target-URI", exchange.url)]
        if exchange.peer:
            common.append(("WARC-IP-Address", exchange.peer))
        revisit = exchange.status == 304 or refers is not None
        # a revisit keeps the headers of the payload it stands for (a replay serves those)
        status = f"HTTP/{exchange.version} {exchange.status} {exchange.reason}".rstrip()
        headers = response_headers(exchange, len(body), keep_cookies=self.keep_cookies)
        http = f"{status}\r\n{_fields(headers)}\r\n".encode("latin-1", "replace")
        response_id = record_id()
        fields = [("WARC-Record-ID", response_id), *common]
        if revisit:
            if exchange.status == 304:
                fields.append(("WARC-Profile", NOT_MODIFIED))
            else:
                assert digest is not None
                fields += [("WARC-Profile", IDENTICAL), ("WARC-Payload-Digest", digest)]
            if refers is not None:
                fields.append(("WARC-Refers-To-Target-URI", refers.uri))
                fields.append(("WARC-Refers-To-Date", refers.date))
                fields.append(("WARC-Refers-To", refers.record_id))
            response = record("revisit", fields, http, HTTP_RESPONSE)
        else:
            fields.append(("WARC-Payload-Digest", digest or sha1_digest(b"")))
            if is_truncated(exchange):
                fields.append(("WARC-Truncated", "length"))
            response = record("response", fields, http + body, HTTP_RESPONSE)
        parts = urlsplit(exchange.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        sent = exchange.request_body or b""
        line = f"{exchange.method} {target} HTTP/{exchange.version}"
        kept = request_headers(exchange.request_headers, self.secret)
        request_block = f"{line}\r\n{_fields(kept)}\r\n".encode() + sent
        fields = [("WARC-Record-ID", record_id()), *common, ("WARC-Concurrent-To", response_id)]
        fields.append(("WARC-Payload-Digest", sha1_digest(sent)))
        request = record("request", fields, request_block, HTTP_REQUEST)
        return [response, request], response_id, date
