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
import functools
import hashlib
import itertools
import json
import os
import zipfile
from collections.abc import Iterable
from typing import Any, BinaryIO

from .._models import Page
from .._version import __version__
from ._atomic import replacing
from ._cdxj import CdxjIndex
from ._warc import ArchiveSink, WarcArchive

WACZ_VERSION = "1.1.1"
_COPY = 1 << 20
_HEAD = b'{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n'


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
        with open(self._pages_path, "rb") as pages, index_segments(self.archive.paths) as index:
            main = self.archive.main
            write_package(self.path, self.archive.paths, index, pages, self._title, main)

    def discard(self) -> None:
        """The archive is kept (its pages may be done in the state file); no package."""
        with contextlib.suppress(OSError):  # the error that stopped the crawl is reported
            self.archive.close()


def listed(page: Page) -> bool:
    """Whether ``page`` goes to a WACZ's page list: an HTML page answered."""
    if page.status is None or page.error is not None:
        return False
    return page.content_type is None or "html" in page.content_type


def index_segments(paths: list[str]) -> CdxjIndex:
    """The capture index of the WARC files ``paths`` (close it when done)."""
    index = CdxjIndex()
    try:
        for name in paths:
            index.add(name, os.path.basename(name))
    except BaseException:
        index.close()
        raise
    return index


def write_package(
    path: str,
    segments: list[str],
    index: CdxjIndex,
    pages: BinaryIO,
    title: str,
    main: tuple[str, str] | None,
) -> None:
    """The WACZ ``path``, whole or not at all: the WARC ``segments`` (names unique), their
    ``index``, the page list's lines read from ``pages``. Each part is streamed into the
    package: the memory it takes does not grow with the crawl."""
    with replacing(path) as temp, zipfile.ZipFile(temp, "w", allowZip64=True) as package:
        _package(package, segments, index, pages, title, main)


def _package(
    package: zipfile.ZipFile,
    segments: list[str],
    index: CdxjIndex,
    pages: BinaryIO,
    title: str,
    main: tuple[str, str] | None,
) -> None:
    resources = []
    for name in segments:
        resources.append(_copy(package, name, "archive/" + os.path.basename(name)))
    lines = (line.encode() for line in index.lines())
    resources.append(_stream(package, "indexes/index.cdx", lines, index.size))
    size = os.fstat(pages.fileno()).st_size - pages.tell()
    chunks = itertools.chain([_HEAD], iter(functools.partial(pages.read, _COPY), b""))
    resources.append(_stream(package, "pages/pages.jsonl", chunks, len(_HEAD) + size))
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


def _stream(
    package: zipfile.ZipFile, inside: str, chunks: Iterable[bytes], size: int
) -> dict[str, Any]:
    """Compress ``chunks`` (``size`` bytes in all: the package knows whether the entry
    needs ZIP64 before it is written) into the entry ``inside``."""
    info = _info(inside, zipfile.ZIP_DEFLATED)
    info.file_size = size
    digest, written = hashlib.sha256(), 0
    with package.open(info, "w") as out:
        for chunk in chunks:
            digest.update(chunk)
            out.write(chunk)
            written += len(chunk)
    if written != size:  # (a bug: the entry's ZIP64 was decided on the size said)
        raise ValueError(f"{inside}: {written} bytes written, {size} said")
    return _resource(inside, digest, size)
