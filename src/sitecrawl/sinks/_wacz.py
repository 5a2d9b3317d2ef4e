"""``-o FILE.wacz``: the crawl's WARC archive packaged as WACZ 1.1.1 (ReplayWeb.page, pywb).

The WARC segments are written during the crawl, as for ``-o FILE.warc.gz`` (durable, resumed
after ``kill -9``), into the folder ``FILE-warc/`` beside the package; the pages go to
``FILE-warc/pages.jsonl`` as they complete. When the crawl ends the package is made, whole
or not at all (a temporary file renamed into place)::

    archive/data.warc.gz, data-00001.warc.gz ...   the segments (stored, not compressed again)
    indexes/index.cdx                                one line a response or revisit, sorted
    pages/pages.jsonl                                url, title, ts of each HTML page archived
    datapackage.json                                 each file's path, size and SHA-256
    datapackage-digest.json                          the SHA-256 of datapackage.json

The folder stays: a later run (resumed, or a re-crawl whose revisits refer to this one's
captures) adds segments to it and packages them all again.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import os
import re
import zipfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from .._models import Page
from .._version import __version__
from ._atomic import replacing
from ._warc import ArchiveSink, WarcArchive

WACZ_VERSION = "1.1.1"
_COPY = 1 << 20
_WWW = re.compile(r"^www\d*\.")
_DEFAULT_PORTS = {"http": 80, "https": 443}


def surt_key(url: str) -> str:
    """The SURT form of ``url`` that CDXJ indexes sort by and pywb looks up (as the ``surt``
    package writes it for ordinary URLs): ``com,example)/a?b=1&c=2``."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    host = _WWW.sub("", host)
    if ":" not in host:  # IPv6 stays as it is
        host = ",".join(reversed(host.split(".")))
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port != _DEFAULT_PORTS.get(parts.scheme):
        host += f":{port}"
    key = f"{host}){parts.path or '/'}"
    if parts.query:
        key += "?" + "&".join(sorted(parts.query.split("&")))
    return key.lower()


def timestamp14(warc_date: str) -> str:
    """``20261203133636`` from a WARC-Date."""
    return re.sub(r"\D", "", warc_date)[:14]


class WaczSink(ArchiveSink):
    """The pages and every exchange of a crawl, into the WACZ package ``path``.

    ``options`` are :class:`WarcArchive`'s (``config``, ``max_size``, ``keep_cookies``)."""

    def __init__(self, path: str, **options: Any) -> None:
        self.path = path
        base = path[: -len(".wacz")] if path.lower().endswith(".wacz") else path
        self.folder = base + "-warc"
        os.makedirs(self.folder, exist_ok=True)
        self._pages_path = os.path.join(self.folder, "pages.jsonl")
        warc = os.path.join(self.folder, "data.warc.gz")
        self.archive = WarcArchive(warc, pages=self._pages_path, **options)
        config = options.get("config")
        self._title = f"sitecrawl {config.base_url}" if config is not None else "sitecrawl"

    def write(self, page: Page) -> None:
        """An HTML page answered goes to the page list (the archive's writer lists it once,
        with its capture's date: its exchange was sent to the writer before)."""
        if listed(page):
            self.archive.list_page(page.final_url or page.url, page.title)

    def close(self) -> None:
        self.archive.close()
        with open(self._pages_path, "rb") as file:
            pages = file.read()
        lines, _ = index_segments(self.archive.paths)
        main = self.archive.main
        write_package(self.path, self.archive.paths, lines, pages, self._title, main)

    def discard(self) -> None:
        """The archive is kept (its pages may be done in the state file); no package."""
        with contextlib.suppress(OSError):  # the error that stopped the crawl is reported
            self.archive.close()


def listed(page: Page) -> bool:
    """Whether ``page`` goes to a WACZ's page list: an HTML page answered."""
    if page.status is None or page.error is not None:
        return False
    return page.content_type is None or "html" in page.content_type


def index_segments(paths: list[str]) -> tuple[list[str], dict[str, str]]:
    """The sorted CDXJ lines of the WARC files ``paths`` and each URL's first capture date."""
    lines: list[str] = []
    for name in paths:
        lines += _index_lines(name, os.path.basename(name))
    lines.sort()
    dates: dict[str, str] = {}
    for line in lines:
        _, stamp, fields = line.split(" ", 2)
        url = json.loads(fields)["url"]
        if url not in dates or stamp < dates[url]:
            dates[url] = stamp
    return lines, dates


def write_package(
    path: str,
    segments: list[str],
    lines: list[str],
    pages: bytes,
    title: str,
    main: tuple[str, str] | None,
) -> None:
    """The WACZ ``path``, whole or not at all: the WARC ``segments`` (names unique), their
    index ``lines``, the ``pages`` lines."""
    with replacing(path) as temp, zipfile.ZipFile(temp, "w", allowZip64=True) as package:
        _package(package, segments, lines, pages, title, main)


def _package(
    package: zipfile.ZipFile,
    segments: list[str],
    lines: list[str],
    pages: bytes,
    title: str,
    main: tuple[str, str] | None,
) -> None:
    resources = []
    for name in segments:
        resources.append(_copy(package, name, "archive/" + os.path.basename(name)))
    resources.append(_put(package, "indexes/index.cdx", "".join(lines).encode()))
    head = b'{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n'
    resources.append(_put(package, "pages/pages.jsonl", head + pages))
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    described: dict[str, Any] = {
        "profile": "data-package",
        "resources": resources,
        "wacz_version": WACZ_VERSION,
        "software": f"sitecrawl {__version__}",
        "created": now,
        "title": title,
    }
    if main is not None:
        described["mainPageURL"], described["mainPageDate"] = main
    data = json.dumps(described, indent=2).encode()
    package.writestr(_info("datapackage.json", zipfile.ZIP_DEFLATED), data)
    digest = {"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(data).hexdigest()}
    package.writestr(
        _info("datapackage-digest.json", zipfile.ZIP_DEFLATED), json.dumps(digest, indent=2)
    )


def _info(name: str, compress: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, datetime.datetime.now(datetime.UTC).timetuple()[:6])
    info.compress_type = compress
    return info


def _resource(inside: str, digest: Any, size: int) -> dict[str, Any]:
    name = os.path.basename(inside).lower()
    return {"name": name, "path": inside, "hash": f"sha256:{digest.hexdigest()}", "bytes": size}


def _copy(package: zipfile.ZipFile, path: str, inside: str) -> dict[str, Any]:
    """Store the file ``path`` as ``inside`` (not compressed: a WARC is, record by record)."""
    digest, size = hashlib.sha256(), 0
    with open(path, "rb") as source, package.open(_info(inside, zipfile.ZIP_STORED), "w") as out:
        while chunk := source.read(_COPY):
            digest.update(chunk)
            out.write(chunk)
            size += len(chunk)
    return _resource(inside, digest, size)


def _put(package: zipfile.ZipFile, inside: str, data: bytes) -> dict[str, Any]:
    package.writestr(_info(inside, zipfile.ZIP_DEFLATED), data)
    return _resource(inside, hashlib.sha256(data), len(data))


def _index_lines(path: str, filename: str) -> Iterator[str]:
    """The CDXJ lines of a segment's responses and revisits."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as stream:
        records = ArchiveIterator(stream)
        for record in records:
            if record.rec_type not in ("response", "revisit"):
                continue
            headers = record.rec_headers
            url = headers.get_header("WARC-Target-URI")
            http = record.http_headers
            fields: dict[str, Any] = {"url": url}
            if http is not None:
                fields["mime"] = (http.get_header("Content-Type") or "").split(";")[0].strip()
                fields["status"] = http.get_statuscode()
            if record.rec_type == "revisit":
                fields["mime"] = "warc/revisit"
            if digest := headers.get_header("WARC-Payload-Digest"):
                fields["digest"] = digest
            fields["length"] = records.get_record_length()
            fields["offset"] = records.get_record_offset()
            fields["filename"] = filename
            date = timestamp14(headers.get_header("WARC-Date"))
            yield f"{surt_key(url)} {date} {json.dumps(fields)}\n"
