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
import io
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
    """The warcio module (FastWARC writes the records, warcio reads them back), or
    :class:`~sitecrawl.MissingExtra` naming the extra."""
    try:
        import fastwarc.warc
        import warcio
        import warcio.archiveiterator
    except ImportError:
        raise MissingExtra(
            f"writing WARC needs fastwarc and warcio: {WARC_HINT}", extra="warc"
        ) from None
    del fastwarc
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


#: Room for a record's WARC headers beside its block: FastWARC writes a record in pieces of
#: ``chunk_size`` bytes and zeroes a buffer of that size first, so the size asked is the
#: record's own (one piece; a fixed 1 MB was two thirds of the archive's instructions).
_HEADROOM = 4096
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
#: Every 10 bits as two base-32 digits (base64.b32encode is pure Python before 3.13).
_B32_PAIRS = [a + b for a in _B32 for b in _B32]


def sha1_digest(data: bytes) -> str:
    """``sha1:BASE32``: the digest warcio writes and pywb compares (160 bits: 32 digits)."""
    number = int.from_bytes(hashlib.sha1(data).digest(), "big")
    return "sha1:" + "".join(_B32_PAIRS[(number >> shift) & 1023] for shift in _SHIFTS)


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


def record(kind: str, fields: list[tuple[str, str]], block: bytes, content_type: str) -> bytes:
    """One WARC 1.1 record, serialized by FastWARC: ``WARC-Type``, ``WARC-Date`` and
    ``WARC-Record-ID`` (from ``fields``, the record id first), ``Content-Length``, the other
    ``fields`` in order, ``Content-Type``, the block digest, the block and the two CRLFs that
    end a record. The digests are hashlib's (OpenSSL's SHA-1, which lets other threads run),
    not FastWARC's (``checksum_data``: three times the CPU, the GIL held, bench/RESULTS.md
    section 31); the payload digest is one of ``fields``: the archive computed it already (a
    revisit is decided by it)."""
    new_record, types = _fastwarc()
    made = new_record()
    made.init_headers(types[kind], fields[0][1][5:-1].encode())  # "<urn:" ... ">"
    headers = made.headers
    for name, value in fields[1:]:
        if name == "WARC-Date":
            headers.set(name, value)
        else:
            headers.append(name, value)
    headers.append("Content-Type", content_type)
    headers.append("WARC-Block-Digest", sha1_digest(block))
    made.set_bytes_content(block)
    out = io.BytesIO()
    made.write(out, chunk_size=len(block) + _HEADROOM)
    return out.getvalue()


@functools.cache
def _fastwarc() -> tuple[Any, dict[str, Any]]:
    """FastWARC's record class and record types (imported when the first record is made)."""
    from fastwarc.warc import WarcRecord, WarcRecordType

    return WarcRecord, {
        "warcinfo": WarcRecordType.warcinfo,
        "response": WarcRecordType.response,
        "request": WarcRecordType.request,
        "revisit": WarcRecordType.revisit,
        "resource": WarcRecordType.resource,
    }


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
    """Serializes records (uncompressed WARC bytes) with FastWARC; no I/O. FastWARC, not
    warcio's writer: of the two, the least CPU a page (bench/RESULTS.md section 31: 166 against
    190 us a response and its request, digests included); each record is then compressed as
    its own gzip member by the archive (FastWARC's ``GzipWriter`` makes one member of all).
    warcio reads them back (recovery, the WACZ index, the tests' checks, digests included)."""

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
        sent = exchange.request_body or b""
        line = f"{exchange.method} {request_target(exchange.url)} HTTP/{exchange.version}"
        kept = request_headers(exchange.request_headers, self.secret)
        request_block = f"{line}\r\n{_fields(kept)}\r\n".encode() + sent
        fields = [("WARC-Record-ID", record_id()), *common, ("WARC-Concurrent-To", response_id)]
        fields.append(("WARC-Payload-Digest", sha1_digest(sent) if sent else _EMPTY_DIGEST))
        request = record("request", fields, request_block, HTTP_REQUEST)
        return [response, request], response_id, date
