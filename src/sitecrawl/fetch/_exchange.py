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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


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

    def wire(self) -> tuple[Any, ...]:
        """The fields without the body, in order, for ``marshal`` (the archive's writer
        process gets the body apart); the body's slot says whether
        there was one (None and ``b""`` differ). :meth:`from_wire` reads it."""
        return (
            self.method,
            self.url,
            self.started,
            self.request_headers,
            self.request_body,
            self.version,
            self.status,
            self.reason,
            self.response_headers,
            self.body is not None,
            self.body_read,
            self.truncated,
            self.peer,
        )

    @classmethod
    def from_wire(cls, fields: Sequence[Any], body: bytes | None) -> Exchange:
        """The exchange :meth:`wire` made ``fields`` of, its body ``body`` (None when it had
        none)."""
        values = list(fields)
        values[9] = body if values[9] else None
        return cls(*values)


#: ``exchange -> None``: called by the fetcher after each response (its body read or not).
Recorder = Callable[[Exchange], None]
