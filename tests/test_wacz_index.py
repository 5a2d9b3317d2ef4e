"""Issue 33: a WACZ's capture index is sorted on disk, not in a Python list: the package of a
crawl of any size is made in bounded memory, and its lines are those of the segments, in the
order pywb looks them up."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from sitecrawl.fetch import Exchange
from sitecrawl.sinks import WarcArchive
from sitecrawl.sinks._cdxj import CdxjIndex, _index_lines


def _archive(path: Path, pages: int, later: float = 0.0) -> None:
    archive = WarcArchive(str(path))
    for number in range(pages):
        body = f"<p>page {number}</p>".encode()
        url = f"http://127.0.0.1:8000/{number % 97}/p{number}?b=1&a={number % 3}"
        archive(
            Exchange(
                method="GET",
                url=url,
                started=1_764_000_000.0 + later + number,
                request_headers=(("Host", "127.0.0.1:8000"),),
                request_body=None,
                version="1.1",
                status=200,
                reason="OK",
                response_headers=(("Content-Type", "text/html"),),
                body=body,
                body_read=True,
                truncated=False,
            )
        )
    archive.close()


def test_the_index_is_the_segments_lines_sorted_in_bounded_memory(tmp_path: Path) -> None:
    first, second = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    _archive(first, 3000)
    _archive(second, 1000, later=86_400.0)  # the same URLs a day later: revisited
    expected = sorted(
        line for path in (first, second) for line, _, _ in _index_lines(str(path), path.name)
    )
    with CdxjIndex() as index:
        index.add(str(first), first.name)
        index.add(str(second), second.name)
        assert index.count == len(expected) == 4000
        assert index.size == sum(len(line.encode()) for line in expected)
        tracemalloc.start()
        try:
            got, peak = [], 0
            for line in index.lines():  # one line at a time out of SQLite's sorter
                got.append(len(line))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < index.size / 4  # (a list of the lines would be more than their size)
        assert list(index.lines()) == expected
        url = "http://127.0.0.1:8000/5/p5?b=1&a=2"
        assert index.first_capture(url) == "20251124160005"  # 1_764_000_005 s: a.warc.gz's
        assert index.first_capture("http://127.0.0.1:8000/none") is None
        assert index.list_once(url) and not index.list_once(url)
