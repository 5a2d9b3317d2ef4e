"""Issue 33: each record is one whole gzip member, whatever its size; a small record (a
request, a redirect, a revisit) at ISA-L's level 0, which skips the level-1 stream set-up that
cost more than such a record's compression (bench/RESULTS.md section 41)."""

from __future__ import annotations

import os
import zlib

import pytest

from sitecrawl.sinks._warc_writer import GZIP_LEVEL, SMALL_RECORD, gzip_member


def _one_member(member: bytes) -> bytes:
    """The data of ``member``, which must be exactly one gzip member."""
    inflate = zlib.decompressobj(31)
    data = inflate.decompress(member) + inflate.flush()
    assert inflate.eof and not inflate.unused_data
    return data


@pytest.mark.parametrize("size", [0, 300, SMALL_RECORD - 1, SMALL_RECORD, 200_000])
def test_a_record_of_any_size_is_one_gzip_member_of_its_pieces(size: int) -> None:
    body = (b"<p>lorem ipsum dolor</p>\n" * (size // 25 + 1))[:size]
    record = (b"WARC/1.1\r\n\r\n", body, b"\r\n\r\n")
    whole = b"".join(record)
    member = gzip_member(record)
    assert _one_member(member) == whole
    if size >= 10_000:
        assert len(member) < len(whole) / 4  # compressed, not stored


def test_small_records_take_isal_s_level_0_and_the_others_level_1() -> None:
    from isal import isal_zlib  # (the warc extra's; the test extra has it)

    text = b"GET /s1/page-3.html HTTP/1.1\r\nHost: 127.0.0.1:8088\r\nAccept: */*\r\n"
    small = (text * 8)[: SMALL_RECORD - 100]
    large = text * 400 + os.urandom(64)
    assert gzip_member((small,)) == isal_zlib.compress(small, 0, 31)
    assert gzip_member((large,)) == isal_zlib.compress(large, GZIP_LEVEL, 31)
    assert gzip_member((small,)) != isal_zlib.compress(small, GZIP_LEVEL, 31)
