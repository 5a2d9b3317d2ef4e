"""``llms.txt`` and ``llms-full.txt`` of a crawled site (pure: page records in, text out).

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

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
    listed = list(pages)
    lines = _head(listed, site_name, summary)
    for _, members in _sections(listed):
        for page in members:
            title = _title(page)
            body = _without_title(page.markdown.strip(), title)
            lines += ["---", "", f"# {title}", "", f"URL: {page.url}", ""]
            if body:
                lines += [body, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


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
