"""One WACZ from the WARC series of a crawl's workers (``export --warc site.warc.gz -o x.wacz``).

Each Redis worker archives its own exchanges as ``site-HOST-PID.warc.gz`` and its numbered
segments (``site-HOST-PID-00001.warc.gz`` ...); the crawl's seed is a worker too. Gathering
first closes what killed workers left open (whole records: the pages they had done are
kept; Redis gave their unfinished pages to others), then takes the closed segments of
``site.warc.gz`` and of every worker's series beside it, indexes them, and lists the crawl's
HTML pages (from its store: titles included) that they captured.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ._wacz import index_segments, listed, write_package
from ._warc_files import ARCHIVE_SUFFIXES, OPEN_MARK, Segments, recover
from ._warc_writer import page_line

if TYPE_CHECKING:
    from .._models import Page


def wacz_entry(page: Page) -> tuple[str, str | None] | None:
    """What a WACZ's page list keeps of ``page`` (url, title), or None (not listed)."""
    return (page.final_url or page.url, page.title) if listed(page) else None


def _series(path: str) -> tuple[str, str, str]:
    """The archive ``path``'s folder, its name without the suffix (a regex, escaped) and
    its suffix as written; ValueError for a name that is not an archive's."""
    ext = next((s for s in ARCHIVE_SUFFIXES if path.lower().endswith(s)), None)
    if ext is None:
        raise ValueError(f"not a WARC file name: {path!r}")
    directory = os.path.dirname(os.path.abspath(path))
    return directory, re.escape(os.path.basename(path[: -len(ext)])), path[-len(ext) :]


def recover_workers(path: str) -> list[str]:
    """Close the segments that killed workers left open in the series of ``path`` and its
    workers' (cut after their last whole record, :func:`~._warc_files.recover`): a worker's
    name holds its process id, so no later run of it would. Returns the paths put in place."""
    directory, stem, ext = _series(path)
    suffix = re.escape(ext)
    pattern = re.compile(
        rf"\.({stem}(?:-[A-Za-z0-9.-]+?)?)(?:-\d{{5,}})?{suffix}{re.escape(OPEN_MARK)}\d+"
    )
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    series = {match[1] for name in names if (match := pattern.fullmatch(name))}
    recovered: list[str] = []
    for base in sorted(series):
        recovered += recover(Segments(os.path.join(directory, base + ext)))
    return recovered


def series_segments(path: str) -> list[str]:
    """The closed segments of the archive ``path`` and of its workers' series, by name."""
    directory, stem, ext = _series(path)
    pattern = re.compile(rf"{stem}(?:-[A-Za-z0-9.-]+)?{re.escape(ext)}")
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    return [os.path.join(directory, name) for name in names if pattern.fullmatch(name)]


def gather_wacz(
    path: str, warc: str, pages: Iterable[tuple[str, str | None]], *, title: str
) -> tuple[int, int]:
    """Write the WACZ ``path`` of every segment of ``warc``'s series (:func:`series_segments`)
    and the ``pages`` (url, title) they captured, once the segments killed workers left open
    are recovered (:func:`recover_workers`). Returns (segments, pages listed);
    ``FileNotFoundError`` when there is no segment."""
    recover_workers(warc)
    segments = series_segments(warc)
    if not segments:
        raise FileNotFoundError(2, "no WARC file of this name or its workers'", warc)
    with index_segments(segments) as index, tempfile.TemporaryFile() as listing:
        main = None
        count = 0
        for url, page_title in pages:
            date = index.first_capture(url)
            if date is None or not index.list_once(url):
                continue
            warc_date = (
                f"{date[:4]}-{date[4:6]}-{date[6:8]}T{date[8:10]}:{date[10:12]}:{date[12:14]}Z"
            )
            main = main or (url, warc_date)
            listing.write(page_line(url, warc_date, page_title))
            count += 1
        listing.seek(0)
        write_package(path, segments, index, listing, title, main)
    return len(segments), count


def _split14(stamp: str) -> list[str]:
    """``20261203133636`` as its year, month, day, hours, minutes and seconds."""
    return [stamp[:4], *(stamp[i : i + 2] for i in range(4, 14, 2))]
