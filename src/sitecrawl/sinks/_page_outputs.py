"""What the outputs of the pages' content share: which paths they are, and a page's fields.

``-o DIR/`` (a path ending in ``/``: one Markdown file a page, :mod:`._markdown_files`),
``-o llms.txt`` and ``-o llms-full.txt`` (:mod:`._llms`) are written from whole page records,
not from rows of a table, so they are sinks of pages only (``crawl -o``, ``export`` of the
pages table). A name other than these two (``site-llms.txt``) is not an llms.txt output: the
proposal names the file.

Each takes a :class:`~sitecrawl.Page` (a crawl) or a record dict (its ``to_dict()``, a stored
row) alike, through :func:`field`.
"""

from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from .._models import Page
from ._base import Sink

LLMS_TXT = "llms.txt"
LLMS_FULL_TXT = "llms-full.txt"

Record = Page | Mapping[str, Any]


def is_markdown_dir(path: str) -> bool:
    """Whether ``path`` names a folder of Markdown files: it ends with ``/`` (or the OS's
    separator)."""
    return path.endswith(("/", os.sep))


def llms_kind(path: str) -> str | None:
    """``llms.txt`` or ``llms-full.txt`` when ``path`` is a file of that name, else None."""
    name = os.path.basename(path)
    return name if name in (LLMS_TXT, LLMS_FULL_TXT) else None


def is_page_output(path: str) -> bool:
    """Whether ``path`` is an output of the pages' content (a folder, llms.txt, llms-full.txt)."""
    return is_markdown_dir(path) or llms_kind(path) is not None


def needs_markdown(path: str) -> bool:
    """Whether writing ``path`` needs each page's Markdown (a folder, llms-full.txt): asking
    for it turns ``--markdown`` on."""
    return is_markdown_dir(path) or llms_kind(path) == LLMS_FULL_TXT


def field(page: Record, name: str) -> Any:
    """A field of a page or a record (None when it has none)."""
    if isinstance(page, Mapping):
        return page.get(name)
    return getattr(page, name, None)


def content_url(page: Record) -> str:
    """Where the page's content is: the URL a redirect ended at, else the URL."""
    return str(field(page, "final_url") or field(page, "url"))


def is_content(page: Record) -> bool:
    """A page whose content is listed: fetched without error, answered 2xx, an HTML page (or
    one with Markdown), and not ``noindex``."""
    status = field(page, "status")
    if field(page, "error") is not None or not isinstance(status, int) or status // 100 != 2:
        return False
    if field(page, "indexable") is False:
        return False
    content_type = str(field(page, "content_type") or "")
    return field(page, "markdown") is not None or "html" in content_type


def host_of(url: str) -> str:
    """The URL's host and port (``example.org``, ``127.0.0.1:8080``), lowercased."""
    return urlsplit(url).netloc.rpartition("@")[2].lower()


class PageOutput(Sink):
    """A sink written from whole page records (see the module). As a context manager (as
    :class:`~._files.FileSink`): closed, the output put in place, when the block ends normally
    or is interrupted (Ctrl-C); discarded when it raises an error."""

    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, page: Page) -> None:
        self.write_record(page)

    @abstractmethod
    def write_record(self, page: Record) -> None:
        """Take one page (a :class:`~sitecrawl.Page` or a record dict)."""

    @abstractmethod
    def discard(self) -> None:
        """Drop what is not in place yet: the path keeps what it held."""
