"""``llms.txt`` and ``llms-full.txt`` of a crawled site: the text (pure: :func:`llms_txt`,
:func:`llms_full_txt`), and :class:`LlmsFile`, the sink of ``-o llms.txt`` / ``-o llms-full.txt``.

``llms.txt`` follows the llms.txt proposal (llmstxt.org): an H1 with the site's name, a ``>``
summary, then one H2 section per top-level folder of the URL paths (pages at the root first,
under "Pages"), each page a ``- [title](url): description`` line::

    # Example Docs

    > Everything about the widget.

    ## Pages

    - [Example Docs](https://example.org/): Everything about the widget.

    ## Docs

    - [Guide](https://example.org/docs/guide.html): How to set it up.

``llms-full.txt`` has the same head, then every page's Markdown in the same order, each under
its title (an H1) and its URL, pages separated by a rule.

The site's name is the title of the page at ``/`` (else the host), the summary its
description, unless given. Pages keep the order they are given in within a section; sections
come in the order of their first page.

:class:`LlmsFile` lists a crawl's content pages (:func:`~._page_outputs.is_content`: fetched
without error, 2xx, HTML, not ``noindex``; llms-full.txt: those with Markdown), each once (a
redirect to a page listed is not listed again; the page's own record is preferred to a
redirect's), in the order of their URLs (the same file for
the same site, whatever order the pages were fetched in); the site's name and summary are the
start page's title and meta description. It is written when the crawl ends (also when it is
stopped), to a temporary file renamed over the path: whole or not at all. It holds a page's
URL, title and description (a few hundred bytes a page); llms-full.txt's Markdown is spooled
to an unnamed temporary file beside the output as pages come, and read back a page at a time.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO
from urllib.parse import unquote, urlsplit

from ._atomic import Replacement
from ._page_outputs import (
    LLMS_FULL_TXT,
    PageOutput,
    Record,
    content_url,
    field,
    is_content,
    llms_kind,
)

_SPACES = re.compile(r"\s+")
_LINK_TEXT_SPECIALS = re.compile(r"([\\\[\]])")
ROOT_SECTION = "Pages"


@dataclass(frozen=True, slots=True)
class LlmsPage:
    """What llms.txt needs of one page: its URL, title, description and Markdown."""

    url: str
    title: str = ""
    description: str = ""
    markdown: str = ""


def llms_txt(
    pages: Iterable[LlmsPage], *, site_name: str | None = None, summary: str | None = None
) -> str:
    """The site's ``llms.txt`` (see the module)."""
    listed = list(pages)
    lines = _head(listed, site_name, summary)
    for section, members in _sections(listed):
        lines += [f"## {section}", ""]
        for page in members:
            entry = f"- [{_link_text(_title(page))}]({_target(page.url)})"
            description = _one_line(page.description)
            lines.append(f"{entry}: {description}" if description else entry)
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def llms_full_txt(
    pages: Iterable[LlmsPage], *, site_name: str | None = None, summary: str | None = None
) -> str:
    """The site's ``llms-full.txt``: the head of ``llms.txt``, then each page's Markdown."""
    return "".join(llms_full_parts(list(pages), site_name=site_name, summary=summary))


def llms_full_parts(
    pages: list[LlmsPage],
    *,
    site_name: str | None = None,
    summary: str | None = None,
    markdown_of: Callable[[LlmsPage], str] | None = None,
) -> Iterator[str]:
    """:func:`llms_full_txt` in pieces, a page at a time: ``markdown_of(page)`` reads a
    page's Markdown when called (default: ``page.markdown``), so that only one page's is held
    at once."""
    read = markdown_of or (lambda page: page.markdown)
    yield "\n".join(_head(pages, site_name, summary)).rstrip("\n") + "\n"
    for _, members in _sections(pages):
        for page in members:
            title = _title(page)
            body = _without_title(read(page).strip(), title)
            yield f"\n---\n\n# {title}\n\nURL: {page.url}\n"
            if body:
                yield f"\n{body}\n"


def section_of(url: str) -> str:
    """The section a page goes in: its path's first folder, as a heading (``getting-started``
    -> ``Getting started``), or :data:`ROOT_SECTION` for a page at the root."""
    path = urlsplit(url).path
    folders = [part for part in path.split("/")[:-1] if part]
    if not folders:
        return ROOT_SECTION
    name = _one_line(unquote(folders[0]).replace("-", " ").replace("_", " "))
    return name[:1].upper() + name[1:] if name else ROOT_SECTION


def _head(pages: list[LlmsPage], site_name: str | None, summary: str | None) -> list[str]:
    home = next((page for page in pages if urlsplit(page.url).path in ("", "/")), None)
    name = site_name or (home.title if home else "") or _host(pages)
    lines = [f"# {_one_line(name) or 'Site'}", ""]
    about = summary if summary is not None else (home.description if home else "")
    if _one_line(about):
        lines += [f"> {_one_line(about)}", ""]
    return lines


def _sections(pages: list[LlmsPage]) -> list[tuple[str, list[LlmsPage]]]:
    grouped: dict[str, list[LlmsPage]] = {ROOT_SECTION: []}
    for page in pages:
        grouped.setdefault(section_of(page.url), []).append(page)
    return [(name, members) for name, members in grouped.items() if members]


def _host(pages: list[LlmsPage]) -> str:
    return (urlsplit(pages[0].url).hostname or "") if pages else ""


def _title(page: LlmsPage) -> str:
    return _one_line(page.title) or urlsplit(page.url).path or page.url


def _without_title(markdown: str, title: str) -> str:
    """The page's Markdown without a first line that repeats its title as an H1."""
    first, _, rest = markdown.partition("\n")
    if first.lstrip("# ").strip() == title and first.startswith("# "):
        return rest.strip()
    return markdown


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _link_text(text: str) -> str:
    return _LINK_TEXT_SPECIALS.sub(r"\\\1", text)


def _target(url: str) -> str:
    """A link target CommonMark reads whole: in ``<>`` when it has spaces or parentheses."""
    return f"<{url}>" if any(c in url for c in " ()<>") else url


@dataclass(frozen=True, slots=True)
class _Spooled:
    """Where a page's Markdown is in the spool file (bytes)."""

    offset: int
    size: int


class LlmsFile(PageOutput):
    """``-o llms.txt`` / ``-o llms-full.txt`` (by the path's name; see the module)."""

    def __init__(self, path: str, *, base_url: str | None = None) -> None:
        super().__init__(path)
        self.full = llms_kind(path) == LLMS_FULL_TXT
        self._base_url = base_url
        self._replacement = Replacement(path)
        #: The pages listed by URL; whether each came as itself (else: a redirect to it).
        self._pages: dict[str, LlmsPage] = {}
        self._direct: dict[str, bool] = {}
        self._where: dict[str, _Spooled] = {}
        self._home: LlmsPage | None = None
        self._spool: IO[bytes] | None = None
        # opened now: a path that cannot be written fails before the crawl, not after it
        self._out: IO[str] = open(  # noqa: SIM115 - closed in close / discard
            self._replacement.temp, "w", encoding="utf-8", newline="\n"
        )
        if self.full:
            folder = os.path.dirname(os.path.realpath(path))
            # closed in close / discard
            self._spool = tempfile.TemporaryFile(dir=folder, prefix=".sitecrawl-spool-")  # noqa: SIM115

    def write_record(self, page: Record) -> None:
        markdown = field(page, "markdown")
        if not is_content(page) or (self.full and markdown is None):
            return
        url = content_url(page)
        direct = field(page, "url") == url
        if url in self._pages and (self._direct[url] or not direct):
            return  # listed: the page itself, or a redirect to it and this is one too
        self._direct[url] = direct
        listed = LlmsPage(
            url, str(field(page, "title") or ""), str(field(page, "meta_description") or "")
        )
        self._pages[url] = listed
        if self._base_url is not None and self._base_url in (field(page, "url"), url):
            self._home = listed
        if self._spool is not None:
            data = str(markdown).encode("utf-8", "surrogatepass")
            self._where[url] = _Spooled(self._spool.tell(), len(data))
            self._spool.write(data)

    def _markdown(self, page: LlmsPage) -> str:
        assert self._spool is not None
        where = self._where[page.url]
        self._spool.seek(where.offset)
        return self._spool.read(where.size).decode("utf-8", "surrogatepass")

    def close(self) -> None:
        """Write the file and put it in place (whole)."""
        pages = [self._pages[url] for url in sorted(self._pages)]
        name = self._home.title if self._home is not None else None
        summary = self._home.description if self._home is not None else None
        try:
            with self._out as out:
                if self.full:
                    for part in llms_full_parts(
                        pages, site_name=name or None, summary=summary, markdown_of=self._markdown
                    ):
                        out.write(part)
                else:
                    out.write(llms_txt(pages, site_name=name or None, summary=summary))
        except BaseException:
            self.discard()
            raise
        self._close_spool()
        self._replacement.commit()

    def discard(self) -> None:
        self._out.close()
        self._close_spool()
        self._replacement.discard()

    def _close_spool(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool = None
