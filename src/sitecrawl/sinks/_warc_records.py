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
import functools
import hashlib
import os
import random
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._exceptions import MissingExtra
from .._urls import strip_fragment

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
    """The warcio module (it reads the archive back: recovery, revisits of earlier segments,
    the WACZ index), or :class:`~sitecrawl.MissingExtra` naming the extra."""
    try:
        import warcio
        import warcio.archiveiterator
    except ImportError:
        raise MissingExtra(f"writing WARC needs warcio: {WARC_HINT}", extra="warc") from None
    return warcio


def warc_date(when: float) -> str:
    """``2026-12-03T13:36:36.123456Z``: WARC 1.1's date, to the microsecond."""
    seconds, micros = divmod(round(when * 1_000_000), 1_000_000)
    return f"{_second(seconds)}.{micros:06d}Z"


@functools.lru_cache(maxsize=4)
def _second(seconds: int) -> str:
    """``2026-12-03T13:36:36``: formatted once a second (a crawl's exchanges share it)."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
#: Every 10 bits as two base-32 digits (base64.b32encode is pure Python before 3.13).
_B32_PAIRS = [a + b for a in _B32 for b in _B32]


def _base32(raw: bytes) -> str:
    """A 160-bit digest in base 32 (32 digits, no padding)."""
    number = int.from_bytes(raw, "big")
    return "".join([_B32_PAIRS[(number >> shift) & 1023] for shift in _SHIFTS])


def sha1_digest(data: bytes) -> str:
    """``sha1:BASE32``: the digest warcio writes and pywb compares (160 bits: 32 digits)."""
    return "sha1:" + _base32(hashlib.sha1(data).digest())


_SHIFTS = range(150, -1, -10)
payload_digest = sha1_digest
_EMPTY_DIGEST = sha1_digest(b"")


def request_target(url: str) -> str:
    """The request line's target of ``url``: its path and query (``/`` for none; an empty
    query kept, as sent), without the fragment; string finds, not ``urlsplit`` (a fifth of
    its time, and a request record a page)."""
    url = strip_fragment(url)
    authority = url.find("//")
    authority = authority + 2 if authority >= 0 else 0
    start = len(url)
    for mark in "/?":
        at = url.find(mark, authority)
        if 0 <= at < start:
            start = at
    target = url[start:]
    return target if target.startswith("/") else "/" + target


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


#: A record as the pieces it is made of, to write (or compress) one after the other: its
#: head, its block's pieces (a body is not copied into the record) and the CRLFs that end it.
Record = tuple[bytes, ...]
_END = b"\r\n\r\n"


def record(
    kind: str, fields: list[tuple[str, str]], block: tuple[bytes, ...], content_type: str
) -> Record:
    """One WARC 1.1 record: ``WARC-Type``, ``WARC-Date`` and ``WARC-Record-ID`` (from
    ``fields``, the record id first), ``Content-Length``, the other ``fields`` in order,
    ``Content-Type``, the block digest, the block (``block``'s pieces) and the two CRLFs that
    end a record. These bytes are FastWARC's serialization of the same fields (its
    ``WarcRecord.write``: ``tests/test_warc.py`` holds the two equal), formatted here: the
    library spent more on its header map and its buffers than on the record
    (bench/RESULTS.md section 38). The payload digest is one of ``fields``: the archive
    computed it already (a revisit is decided by it)."""
    digest = hashlib.sha1(block[0])
    for piece in block[1:]:
        digest.update(piece)
    head = [
        f"WARC/1.1\r\nWARC-Type: {kind}\r\n",
        *(f"{name}: {value}\r\n" for name, value in fields if name == "WARC-Date"),
        f"WARC-Record-ID: {fields[0][1]}\r\n",
        f"Content-Length: {sum(map(len, block))}\r\n",
        *(f"{name}: {value}\r\n" for name, value in fields[1:] if name != "WARC-Date"),
        f"Content-Type: {content_type}\r\n",
        f"WARC-Block-Digest: sha1:{_base32(digest.digest())}\r\n\r\n",
    ]
    return ("".join(head).encode(), *block, _END)


#: Random bits for record ids, seeded from the system once (``uuid4`` reads ``os.urandom``
#: twice a page: a twentieth of the archive's CPU, bench/RESULTS.md section 31).
_RANDOM = random.Random(os.urandom(32))
os.register_at_fork(after_in_child=lambda: _RANDOM.seed(os.urandom(32)))  # no twin ids
_VERSION_4 = (4 << 76) | (2 << 62)
_KEEP = ~((0xF << 76) | (3 << 62)) & ((1 << 128) - 1)


def record_id() -> str:
    """``<urn:uuid:...>``: a random (version 4) UUID."""
    hexa = f"{(_RANDOM.getrandbits(128) & _KEEP) | _VERSION_4:032x}"
    return f"<urn:uuid:{hexa[:8]}-{hexa[8:12]}-{hexa[12:16]}-{hexa[16:20]}-{hexa[20:]}>"


class RecordMaker:
    """Makes an exchange's records (:func:`record`: uncompressed WARC, as pieces); no I/O.
    The archive compresses each record as its own gzip member; warcio reads them back
    (recovery, the WACZ index, the tests' checks, digests included)."""

    def __init__(self, *, keep_cookies: bool, secret_headers: Collection[str] = ()) -> None:
        self.keep_cookies = keep_cookies
        self.secret = SECRET_REQUEST_HEADERS | {name.lower() for name in secret_headers}

    def warcinfo(self, filename: str, fields: dict[str, str]) -> Record:
        block = (_fields((name, value) for name, value in fields.items() if value).encode(),)
        head = [
            ("WARC-Record-ID", record_id()),
            ("WARC-Date", warc_date(time.time())),
            ("WARC-Filename", filename),
        ]
        return record("warcinfo", head, block, "application/warc-fields")

    def exchange(
        self, exchange: Exchange, refers: Capture | None, digest: str | None
    ) -> tuple[list[Record], str, str]:
        """The records of ``exchange``: response (or revisit) then request; the response's
        record id and date. ``refers``: the capture a revisit names (None: a full response
        unless a 304); ``digest``: the body's payload digest (None: no body)."""
        response_id = record_id()
        if exchange.status == 304 or refers is not None:
            size = len(exchange.body or b"")
            response = self.revisit(exchange, refers, digest, response_id, size)
        else:
            response = self.response(exchange, digest, response_id)
        date = warc_date(exchange.started)
        return [response, self.request(exchange, response_id, date)], response_id, date

    def _http(self, exchange: Exchange, size: int) -> bytes:
        """The response's status line and headers, as they describe ``size`` bytes stored."""
        status = f"HTTP/{exchange.version} {exchange.status} {exchange.reason}".rstrip()
        headers = response_headers(exchange, size, keep_cookies=self.keep_cookies)
        return f"{status}\r\n{_fields(headers)}\r\n".encode("latin-1", "replace")

    def response(self, exchange: Exchange, digest: str | None, response_id: str) -> Record:
        """The ``response`` record of ``exchange``: its HTTP response as received, its body
        the payload (``digest``: its payload digest, None for no body)."""
        body = exchange.body or b""
        fields = [("WARC-Record-ID", response_id), *_common(exchange)]
        fields.append(("WARC-Payload-Digest", digest or _EMPTY_DIGEST))
        if is_truncated(exchange):
            fields.append(("WARC-Truncated", "length"))
        return record("response", fields, (self._http(exchange, len(body)), body), HTTP_RESPONSE)

    def revisit(
        self,
        exchange: Exchange,
        refers: Capture | None,
        digest: str | None,
        response_id: str,
        size: int,
    ) -> Record:
        """The ``revisit`` record of ``exchange`` (a 304, or a payload archived before: the
        capture ``refers``); it keeps the headers of the payload it stands for (a replay
        serves those), its ``size`` bytes."""
        fields = [("WARC-Record-ID", response_id), *_common(exchange)]
        if exchange.status == 304:
            fields.append(("WARC-Profile", NOT_MODIFIED))
        else:
            assert digest is not None
            fields += [("WARC-Profile", IDENTICAL), ("WARC-Payload-Digest", digest)]
        if refers is not None:
            fields.append(("WARC-Refers-To-Target-URI", refers.uri))
            fields.append(("WARC-Refers-To-Date", refers.date))
            fields.append(("WARC-Refers-To", refers.record_id))
        return record("revisit", fields, (self._http(exchange, size),), HTTP_RESPONSE)

    def request(self, exchange: Exchange, response_id: str, date: str) -> Record:
        """The ``request`` record of ``exchange``, concurrent to the record ``response_id``,
        without the crawl's credentials."""
        sent = exchange.request_body or b""
        line = f"{exchange.method} {request_target(exchange.url)} HTTP/{exchange.version}"
        kept = request_headers(exchange.request_headers, self.secret)
        block = f"{line}\r\n{_fields(kept)}\r\n".encode() + sent
        fields = [("WARC-Record-ID", record_id()), *_common(exchange, date)]
        fields.append(("WARC-Concurrent-To", response_id))
        fields.append(("WARC-Payload-Digest", sha1_digest(sent) if sent else _EMPTY_DIGEST))
        return record("request", fields, (block,), HTTP_REQUEST)


def _common(exchange: Exchange, date: str | None = None) -> list[tuple[str, str]]:
    """The fields an exchange's records share: its date, URL and the address it came from."""
    common = [("WARC-Date", date or warc_date(exchange.started)), ("WARC-Target-URI", exchange.url)]
    if exchange.peer:
        common.append(("WARC-IP-Address", exchange.peer))
    return common
