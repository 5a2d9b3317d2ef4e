"""The ``sitecrawl`` logger: where a library user routes what the crawl has to say.

Warnings: a robots.txt Crawl-delay capped, a robots.txt that could not be read (the origin is
disallowed for now), a request given up after its retries. Debug: one record per page
(``page 200 URL: ok``; its ``request_line`` attribute, :func:`request_line`, is what
``sitecrawl crawl -v`` prints on stderr). The
logger has a :class:`logging.NullHandler` only, as a library's should: nothing is printed
unless the application configures logging (``logging.basicConfig()``, or a handler on
``logging.getLogger("sitecrawl")``). The command line prints its own summary instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._models import Page

logger = logging.getLogger("sitecrawl")
logger.addHandler(logging.NullHandler())


def request_line(page: Page) -> str:
    """One page's request, as ``-v`` logs it: ``200 12 ms 5,120 B https://...``, a
    revalidated one ``304 (unchanged)``, a failed one its kind and error."""
    parts = ["304 (unchanged)" if page.revalidated else str(page.status or "---")]
    if page.response_time_ms is not None:
        parts.append(f"{page.response_time_ms:,.0f} ms")
    if page.size_bytes is not None and not page.revalidated:
        parts.append(f"{page.size_bytes:,} B")
    parts.append(page.url)
    if page.final_url and page.final_url != page.url:
        parts.append(f"-> {page.final_url}")
    if page.error is not None:
        parts.append(f"[{page.error_kind or 'error'}] {page.error}")
    return " ".join(parts)
