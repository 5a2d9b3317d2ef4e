"""Issue 33: what crosses to the archive's writer process arrives whole: an exchange's fields
(its body apart, None and empty told apart) and jobs of any size, the writer reading them into
a buffer it keeps (and grows for a larger job) instead of a new 1 MB string a read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sitecrawl.fetch import Exchange
from sitecrawl.sinks._warc_child import JOB, _keep_rest
from test_warc import by_type, records


def _exchange(body: bytes | None, **changes: Any) -> Exchange:
    fields: dict[str, Any] = {
        "method": "GET",
        "url": "http://127.0.0.1:8000/caf%C3%A9?q=1",
        "started": 1_764_000_000.25,
        "request_headers": (("Host", "127.0.0.1:8000"),),
        "request_body": None,
        "version": "1.1",
        "status": 200,
        "reason": "OK",
        "response_headers": (("Content-Type", "text/html; charset=utf-8"),),
        "body": body,
        "body_read": body is not None,
        "truncated": False,
        "peer": "127.0.0.1",
    }
    return Exchange(**{**fields, **changes})


def test_an_exchange_crosses_the_wire_whole() -> None:
    for body in (b"<p>x</p>", b"", None):
        exchange = _exchange(body)
        assert Exchange.from_wire(exchange.wire(), body) == exchange


def test_the_unread_rest_moves_to_the_buffer_s_start_or_a_larger_buffer() -> None:
    buffer = bytearray(64)
    header = JOB.pack(b"x", 2, 8)
    buffer[: 30 + len(header) + 1] = b"a" * 30 + header + b"m"  # a job begins at 30
    same, rest = _keep_rest(buffer, 30, 30 + len(header) + 1)
    assert same is buffer and rest == len(header) + 1
    assert bytes(same[:rest]) == header + b"m"
    buffer[: JOB.size] = JOB.pack(b"x", 100, 1000)  # larger than the buffer: a larger one
    larger, rest = _keep_rest(buffer, 0, JOB.size)
    assert len(larger) > JOB.size + 1100 and rest == JOB.size
    assert bytes(larger[:rest]) == JOB.pack(b"x", 100, 1000)


def test_the_writer_takes_jobs_larger_than_its_read_buffer(tmp_path: Path) -> None:
    """Bodies of several MB between small ones, sent without an event loop (blocking
    writes): every payload archived whole, in order."""
    from sitecrawl.sinks import WarcArchive

    archive = WarcArchive(str(tmp_path / "big.warc.gz"))
    bodies = [b"<p>small</p>", bytes(range(256)) * 12_000, b"<p>tiny</p>", b"x" * 5_000_000]
    for number, body in enumerate(bodies):
        archive(_exchange(body, url=f"http://127.0.0.1:8000/{number}"))
    archive.close()
    got = [p for _, p in by_type(records(tmp_path / "big.warc.gz"), "response")]
    assert got == bodies
