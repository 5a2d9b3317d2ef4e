#!/usr/bin/env python3
"""CPU a page's WARC records cost, by writer: sitecrawl's record maker, warcio's ``WARCWriter``
and FastWARC's ``WarcRecord.write``, on the same exchanges (bench site pages, as the fetcher
hands them to the archive: request and response headers, the decoded body).

Each writer makes, per page, a ``response`` record (block and payload SHA-1 digests) and a
``request`` record naming it in ``WARC-Concurrent-To``, into memory, either uncompressed or
each record as its own gzip member (``--gzip``: ISA-L level 1 for every writer, as the
archive writes them; FastWARC's ``GzipWriter`` makes one member of all records, warcio's
``gzip=True`` zlib level 9). The best of ``--repeat`` runs, in microseconds of
process CPU per page::

    python bench/gen_site.py --pages 5000 --out /tmp/site5k
    python bench/warc_writers.py --site /tmp/site5k --pages 300 [--gzip]
    python bench/warc_writers.py --site /tmp/site5k --gzip --only archive   # the whole path
    PYTHONPATH=/tmp/base/src python bench/warc_writers.py ... --only archive  # another checkout
"""

from __future__ import annotations

import argparse
import hashlib
import io
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from sitecrawl.fetch import Exchange
from sitecrawl.sinks._warc_records import RecordMaker, payload_digest, sha1_digest, warc_date
from sitecrawl.sinks._warc_writer import gzip_member as _gzip_member

BASE = "http://127.0.0.1:8133"
EMPTY = hashlib.sha1(b"").digest()


def exchanges(site: Path, count: int) -> list[Exchange]:
    files = sorted(site.rglob("*.html"))[:count]
    out = []
    for file in files:
        body = file.read_bytes()
        url = BASE + "/" + str(file.relative_to(site))
        out.append(
            Exchange(
                method="GET",
                url=url,
                started=time.time(),
                request_headers=(
                    ("Host", "127.0.0.1:8133"),
                    ("User-Agent", "sitecrawl/0.1 (+https://example.org/bot)"),
                    ("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8"),
                    ("Accept-Encoding", "gzip, deflate, br"),
                ),
                request_body=None,
                version="1.1",
                status=200,
                reason="OK",
                response_headers=(
                    ("Server", "nginx/1.22.1"),
                    ("Date", "Thu, 03 Dec 2026 13:36:36 GMT"),
                    ("Content-Type", "text/html"),
                    ("Last-Modified", "Thu, 03 Dec 2026 12:00:00 GMT"),
                    ("Transfer-Encoding", "chunked"),
                    ("Connection", "keep-alive"),
                    ("ETag", 'W/"6710-5f1c"'),
                    ("Content-Encoding", "gzip"),
                ),
                body=body,
                body_read=True,
                truncated=False,
                peer="127.0.0.1",
            )
        )
    return out


def handwritten(
    kind: str, fields: list[tuple[str, str]], block: tuple[bytes, ...], content_type: str
) -> tuple[bytes, ...]:
    """The records as sitecrawl wrote them itself before section 31 (commit e7aa8d1), the
    block joined first as it was then."""
    joined = b"".join(block)
    lines = "".join(f"{name}: {value}\r\n" for name, value in fields)
    head = (
        f"WARC/1.1\r\nWARC-Type: {kind}\r\n{lines}"
        f"WARC-Block-Digest: {sha1_digest(joined)}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(joined)}\r\n\r\n"
    )
    return (b"".join((head.encode("utf-8"), joined, b"\r\n\r\n")),)


def handwritten_writer(gzip: bool) -> Callable[[list[Exchange]], int]:
    from sitecrawl.sinks import _warc_records

    run = sitecrawl_writer(gzip)

    def patched(batch: list[Exchange]) -> int:
        saved, _warc_records.record = _warc_records.record, handwritten
        try:
            return run(batch)
        finally:
            _warc_records.record = saved

    return patched


def sitecrawl_writer(gzip: bool) -> Callable[[list[Exchange]], int]:
    """sitecrawl's RecordMaker as it is (FastWARC's serializer in sections 31-37, its bytes
    formatted by sitecrawl since section 38)."""
    maker = RecordMaker(keep_cookies=False)

    def run(batch: list[Exchange]) -> int:
        out = io.BytesIO()
        for exchange in batch:
            assert exchange.body is not None
            records, _, _ = maker.exchange(exchange, None, payload_digest(exchange.body))
            if gzip:
                out.write(b"".join(map(_gzip_member, records)))
            else:
                out.write(b"".join([piece for record in records for piece in record]))
        return out.tell()

    return run


def warcio_writer(gzip: bool) -> Callable[[list[Exchange]], int]:
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    maker = RecordMaker(keep_cookies=False)

    def run(batch: list[Exchange]) -> int:
        out = io.BytesIO()
        record_out = io.BytesIO()
        writer = WARCWriter(record_out, gzip=False, warc_version="WARC/1.1")
        for exchange in batch:
            body = exchange.body or b""
            headers = [
                ("WARC-Date", warc_date(exchange.started)),
                ("WARC-IP-Address", exchange.peer or ""),
            ]
            http = StatusAndHeaders(
                f"{exchange.status} {exchange.reason}",
                maker_headers(exchange, len(body)),
                protocol="HTTP/1.1",
            )
            response = writer.create_warc_record(
                exchange.url,
                "response",
                payload=io.BytesIO(body),
                length=len(body),
                http_headers=http,
                warc_headers_dict=dict(headers),
            )
            request_http = StatusAndHeaders(
                "GET /x HTTP/1.1", list(exchange.request_headers), is_http_request=True
            )
            request = writer.create_warc_record(
                exchange.url,
                "request",
                payload=io.BytesIO(b""),
                length=0,
                http_headers=request_http,
                warc_headers_dict={
                    **dict(headers),
                    "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
                },
            )
            for record in (response, request):
                record_out.seek(0)
                record_out.truncate()
                writer.write_record(record)
                data = record_out.getvalue()
                out.write(_gzip_member((data,)) if gzip else data)
        return out.tell()

    def maker_headers(exchange: Exchange, stored: int) -> list[tuple[str, str]]:
        from sitecrawl.sinks._warc_records import response_headers

        return response_headers(exchange, stored, keep_cookies=False)

    del maker
    return run


def fastwarc_writer(gzip: bool) -> Callable[[list[Exchange]], int]:
    from fastwarc.warc import WarcRecord, WarcRecordType

    from sitecrawl.sinks._warc_records import request_headers, response_headers

    def run(batch: list[Exchange]) -> int:
        out = io.BytesIO()
        stream = io.BytesIO()
        for exchange in batch:
            body = exchange.body or b""
            date = warc_date(exchange.started)
            status = f"HTTP/{exchange.version} {exchange.status} {exchange.reason}"
            lines = response_headers(exchange, len(body), keep_cookies=False)
            http = (status + "\r\n" + "".join(f"{n}: {v}\r\n" for n, v in lines) + "\r\n").encode(
                "latin-1"
            )
            response = WarcRecord()
            urn = f"uuid:{uuid.uuid4()}"
            response_id = f"<urn:{urn}>"
            response.init_headers(WarcRecordType.response, urn.encode())
            response.headers.set("WARC-Date", date)
            response.headers.append("WARC-Target-URI", exchange.url)
            response.headers.append("WARC-IP-Address", exchange.peer or "")
            response.headers.append("Content-Type", "application/http; msgtype=response")
            response.set_bytes_content(http + body)
            payload = hashlib.sha1(body).digest()  # the revisit check needs it first
            response.write(stream, checksum_data=True, payload_digest=payload)
            emit(stream, out)
            kept = request_headers(exchange.request_headers, {"cookie", "authorization"})
            block = (
                "GET /x HTTP/1.1\r\n" + "".join(f"{n}: {v}\r\n" for n, v in kept) + "\r\n"
            ).encode()
            request = WarcRecord()
            request.init_headers(WarcRecordType.request, f"uuid:{uuid.uuid4()}".encode())
            request.headers.set("WARC-Date", date)
            request.headers.append("WARC-Target-URI", exchange.url)
            request.headers.append("WARC-Concurrent-To", response_id)
            request.headers.append("Content-Type", "application/http; msgtype=request")
            request.set_bytes_content(block)
            request.write(stream, checksum_data=True, payload_digest=EMPTY)
            emit(stream, out)
        return out.tell()

    def emit(stream: io.BytesIO, out: io.BytesIO) -> None:
        # FastWARC's GzipWriter makes one gzip member of all records: each is compressed here
        data = stream.getvalue()
        stream.seek(0)
        stream.truncate()
        out.write(_gzip_member((data,)) if gzip else data)

    return run


def archive_writer(gzip: bool) -> Callable[[list[Exchange]], int]:
    """The whole work of ``-o x.warc.gz``'s writer process: ArchiveWriter (payload digest,
    revisit lookups, records, gzip members, one ``write`` a batch) into a temporary
    directory."""
    import dataclasses
    import os
    import tempfile

    from sitecrawl.sinks._warc_writer import ArchiveWriter

    runs = iter(range(1 << 30))

    def run(batch: list[Exchange]) -> int:
        directory = tempfile.mkdtemp(prefix="warc-writers-")
        name = os.path.join(directory, "x.warc.gz" if gzip else "x.warc")
        archive = ArchiveWriter(name, info={}, max_size=1 << 30, refer_back=False)
        tag = f"?run={next(runs)}"  # no payload seen before: every page a full response
        for exchange in batch:
            archive.archive(dataclasses.replace(exchange, url=exchange.url + tag))
        archive.flush()
        archive.close()
        size = sum(os.path.getsize(path) for path in archive.written)
        for path in archive.written:
            os.unlink(path)
        os.rmdir(directory)
        return size

    return run


WRITERS = {
    "handwritten": handwritten_writer,
    "sitecrawl": sitecrawl_writer,
    "warcio": warcio_writer,
    "fastwarc": fastwarc_writer,
    "archive": archive_writer,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, required=True)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--only", nargs="*", default=[n for n in WRITERS if n != "archive"])
    args = parser.parse_args()
    batch = exchanges(args.site, args.pages)
    runs = {name: WRITERS[name](args.gzip) for name in args.only}
    best: dict[str, float] = {name: float("inf") for name in runs}
    sizes: dict[str, int] = {}
    for _ in range(args.repeat):  # interleaved: the machine's load falls on each alike
        for name, run in runs.items():
            start = time.process_time()
            sizes[name] = run(batch)
            best[name] = min(best[name], time.process_time() - start)
    for name in runs:
        micro = best[name] / len(batch) * 1e6
        print(f"{name:10s} {micro:7.1f} us/page   {sizes[name] / len(batch):9.0f} bytes/page")


if __name__ == "__main__":
    main()
