"""``export -t chunks``: every page's Markdown cut into chunks for retrieval, one row a chunk.

The cutting is :func:`sitecrawl.parse.chunks` (at headings, then between paragraphs; never
inside a code block or a table row); the tokens are counted by
:func:`sitecrawl.parse.count_tokens`, an approximation of the OpenAI tokenizers that needs no
vocabulary file (nothing is downloaded). Columns::

    url       where the content is (a redirect's end)
    title     the page's title
    chunk     the chunk's number in its page, from 0
    headings  its heading path, outer first (a list)
    text      the chunk's Markdown
    tokens    its token count

Pages without Markdown (a crawl without ``--markdown``, failures, non-HTML bodies) give no
row. Rows stream: one page's Markdown is held at a time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING

from ..parse import chunks
from ._page_outputs import Record, content_url, field
from ._tables import Row, TableSpec

if TYPE_CHECKING:
    from ..frontier import PageStore

CHUNKS = TableSpec(
    "chunks",
    (
        ("url", "str"),
        ("title", "str"),
        ("chunk", "int"),
        ("headings", "strs"),
        ("text", "str"),
        ("tokens", "int"),
    ),
)
DEFAULT_CHUNK_TOKENS = 512


def page_chunk_rows(page: Record, max_tokens: int = DEFAULT_CHUNK_TOKENS) -> Iterator[Row]:
    """The chunk rows of one page (none without Markdown, or for a failed page)."""
    markdown = field(page, "markdown")
    if not markdown or field(page, "error") is not None:
        return
    url, title = content_url(page), field(page, "title")
    for number, chunk in enumerate(chunks(str(markdown), max_tokens=max_tokens)):
        yield {
            "url": url,
            "title": title,
            "chunk": number,
            "headings": list(chunk.headings),
            "text": chunk.text,
            "tokens": chunk.tokens,
        }


def chunk_rows(pages: Iterable[Record], max_tokens: int = DEFAULT_CHUNK_TOKENS) -> Iterator[Row]:
    """The chunk rows of ``pages``, in their order."""
    for page in pages:
        yield from page_chunk_rows(page, max_tokens)


async def store_chunk_rows(
    store: PageStore, max_tokens: int = DEFAULT_CHUNK_TOKENS
) -> AsyncIterator[Row]:
    """The chunk rows of every page of a page store, streamed."""
    async for page in store.read_pages():
        for row in page_chunk_rows(page, max_tokens):
            yield row
