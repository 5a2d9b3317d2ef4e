"""The archive's capture index (what revisits refer to): its answers, and that it keeps no
Python object per capture (the archive's memory stays flat with the crawl's size)."""

from __future__ import annotations

import tracemalloc

from sitecrawl.sinks._captures import CaptureIndex
from sitecrawl.sinks._warc_records import Capture


def capture(n: int) -> Capture:
    return Capture(f"https://example.test/p/{n}", "2026-12-03T20:00:00.000000Z", f"<urn:{n}>")


def test_a_url_answers_its_last_capture_and_a_digest_its_first() -> None:
    index = CaptureIndex()
    assert index.by_url("https://example.test/p/1") is None
    assert index.by_digest("sha1:A") is None
    index.note("https://example.test/p/1", capture(1), "sha1:A")
    index.note("https://example.test/p/2", capture(2), "sha1:A")  # the same payload again
    index.note("https://example.test/p/1", capture(3))  # a later capture of p/1, no digest
    assert index.by_url("https://example.test/p/1") == capture(3)
    assert index.by_url("https://example.test/p/2") == capture(2)
    assert index.by_digest("sha1:A") == capture(1)


def test_the_index_holds_no_python_object_a_capture() -> None:
    index = CaptureIndex(cache_kib=2048)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for n in range(50_000):
            index.note(f"https://example.test/p/{n}", capture(n), f"sha1:{n:032d}")
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # a dict of them held ~420 bytes a capture: ~20 MB here (bench/RESULTS.md section 37)
    assert after - before < 1_000_000
    assert index.by_url("https://example.test/p/49999") == capture(49_999)
    assert index.by_digest(f"sha1:{7:032d}") == capture(7)


def test_a_url_is_listed_once() -> None:
    index = CaptureIndex()
    assert index.list_once("https://example.test/p/1") is True
    assert index.list_once("https://example.test/p/2") is True
    assert index.list_once("https://example.test/p/1") is False
