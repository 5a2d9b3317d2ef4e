"""One HTTP exchange as it went over the wire, for whoever archives them (a WARC file).

The fetcher builds an :class:`Exchange` only when it was given a :data:`Recorder`: a crawl
that archives nothing pays one ``is None`` test a request. Every request the crawl makes is
one exchange (each redirect hop, each retry, robots.txt and sitemaps), with the headers sent
(the session's cookies and credentials included: whoever stores them must drop them) and the
headers received as the server wrote them, in order.

``body`` is the payload as read: aiohttp has undone the ``Transfer-Encoding`` (chunks) and the
``Content-Encoding`` (gzip, br, ...), so it is the identity payload, not the bytes on the
wire; ``body_read`` is False when the body was not read at all (a redirect, a HEAD, a body that
is not HTML), ``truncated`` True when it was cut at the crawl's ``--max-bytes``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True, frozen=True)
class Exchange:
    """A request and the response it got (headers as ``(name, value)`` pairs, in order)."""

    method: str
    url: str
    started: float  # time.time() when the request was sent
    request_headers: tuple[tuple[str, str], ...]
    request_body: bytes | None
    version: str  # "1.1"
    status: int
    reason: str
    response_headers: tuple[tuple[str, str], ...]
    body: bytes | None
    body_read: bool
    truncated: bool
    peer: str | None = None  # the address connected to, when known


#: ``exchange -> None``: called by the fetcher after each response (its body read or not).
Recorder = Callable[[Exchange], None]
