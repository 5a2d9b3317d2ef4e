"""A PDF body -> record fields (pure: bytes in, values out), with pypdfium2 (the ``pdf`` extra).

pypdfium2 is PDFium, Chromium's PDF engine, in one wheel: of the three libraries measured it
read a 100-page PDF in the least CPU by far, with the best word-level F1 against the HTML the
PDF was printed from (``bench/RESULTS.md`` section 22, ``bench/pdf_bench.py``).

The Markdown is each page's text in page order, every page after a ``<!-- page N -->``
comment on a line of its own (a comment shows nothing when rendered and keeps the page
number for a reader to cite; a horizontal rule after a line of text would turn it into a
heading). Lines that Markdown would read as markup (``#``, ``>``, ``-``, ``*``, ``+``, ``|``,
``<``, ``=``, a fence) are escaped with a backslash.

The links are the URI actions of the link annotations, resolved against the PDF's URL (a
relative URI is rare, but allowed), http(s) only, fragments dropped, as an HTML page's; each
link's text is the page's text under the annotation's rectangle.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass, field
from typing import Any

from .._exceptions import MissingExtra, PdfBroken, PdfEncrypted
from .._models import Link
from .._urls import join
from ._words import count_words

INSTALL_HINT = "pip install 'sitecrawl[pdf]'"
#: A title taken from the first line is cut at this many characters.
TITLE_CHARS = 300
_MARKUP_START = re.compile(r"^(?=[#>*+|<=-]|`{3}|~{3})", re.MULTILINE)
_BLANKS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


@dataclass(slots=True)
class PdfText:
    """What a PDF gives its page record."""

    title: str | None = None
    page_count: int = 0
    markdown: str = ""
    word_count: int = 0
    #: The distinct link targets, in order of first appearance.
    outgoing_links: list[str] = field(default_factory=list)
    #: Every link as ``(url, text, None, "a")``, duplicates included (:data:`~._models.Link`).
    links: list[Link] = field(default_factory=list)


def pdfium() -> Any:
    """The pypdfium2 module, or :class:`~sitecrawl.MissingExtra` naming the install command."""
    try:
        import pypdfium2
        import pypdfium2.raw
    except ImportError as exc:
        reason = f"no module {exc.name}" if exc.name else (str(exc).splitlines() or ["?"])[0]
        why = f"reading PDFs needs pypdfium2 ({reason}): {INSTALL_HINT}"
        raise MissingExtra(why, extra="pdf") from None
    return pypdfium2


def pdf_available() -> bool:
    """True when the ``pdf`` extra is installed (imports nothing)."""
    import importlib.util

    return importlib.util.find_spec("pypdfium2") is not None


def read_pdf(body: bytes, url: str) -> PdfText:
    """The fields of the PDF ``body`` fetched from ``url``. Raises :class:`PdfEncrypted` for
    a PDF that needs a password to be read (one with only an owner password reads as any
    other), :class:`PdfBroken` for one PDFium cannot open or read, and
    :class:`~sitecrawl.MissingExtra` without the ``pdf`` extra."""
    lib = pdfium()
    raw = lib.raw
    try:
        doc = lib.PdfDocument(body)
    except lib.PdfiumError as exc:
        if getattr(exc, "err_code", None) == raw.FPDF_ERR_PASSWORD:
            raise PdfEncrypted("PDF is encrypted: it needs a password", url=url) from None
        raise PdfBroken(f"not a readable PDF: {exc}", url=url) from None
    try:
        return _read(lib, doc, url)
    except lib.PdfiumError as exc:
        raise PdfBroken(f"PDF could not be read: {exc}", url=url) from None
    finally:
        doc.close()


def _read(lib: Any, doc: Any, url: str) -> PdfText:
    raw = lib.raw
    pages: list[str] = []
    links: list[Link] = []
    for number in range(len(doc)):
        page = doc[number]
        try:
            textpage = page.get_textpage()
            try:
                pages.append(_clean(textpage.get_text_range()))
                links.extend(_page_links(raw, doc, page, textpage, url))
            finally:
                textpage.close()
        finally:
            page.close()
    title = (doc.get_metadata_value("Title") or "").strip() or _first_line(pages)
    markdown = "\n\n".join(
        f"<!-- page {n} -->\n\n{_MARKUP_START.sub(_escape, text)}".rstrip()
        for n, text in enumerate(pages, 1)
    )
    return PdfText(
        title=title,
        page_count=len(pages),
        markdown=markdown + "\n" if markdown else "",
        word_count=sum(count_words(text) for text in pages),
        outgoing_links=list(dict.fromkeys(target for target, _, _, _ in links)),
        links=links,
    )


def _escape(_: re.Match[str]) -> str:
    return "\\"


def _clean(text: str) -> str:
    """PDFium's page text as plain lines: ``\\r\\n`` to ``\\n``, NULs and the marks it puts
    for hyphens and soft breaks out, trailing spaces and runs of blank lines dropped."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    text = text.replace("\x02", "").replace("\ufffe", "").replace("\ufeff", "")
    lines = [line.rstrip() for line in text.split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip()


def _first_line(pages: list[str]) -> str | None:
    for text in pages:
        for line in text.split("\n"):
            if line := " ".join(line.split()):
                return line[:TITLE_CHARS]
    return None


def _page_links(raw: Any, doc: Any, page: Any, textpage: Any, url: str) -> list[Link]:
    """The page's link annotations whose action is a URI: ``(target, text, None, "a")``."""
    found: list[Link] = []
    position = ctypes.c_int(0)
    link = raw.FPDF_LINK()
    while raw.FPDFLink_Enumerate(page.raw, ctypes.byref(position), ctypes.byref(link)):
        action = raw.FPDFLink_GetAction(link)
        if not action or raw.FPDFAction_GetType(action) != raw.PDFACTION_URI:
            continue
        size = raw.FPDFAction_GetURIPath(doc.raw, action, None, 0)
        if size <= 1:
            continue
        buffer = ctypes.create_string_buffer(size)
        raw.FPDFAction_GetURIPath(doc.raw, action, buffer, size)
        uri = buffer.raw[: size - 1].decode("utf-8", "replace").strip()
        target = join(url, uri)
        if target is None:  # not http(s), or not a URL
            continue
        rect = raw.FS_RECTF()
        text = None
        if raw.FPDFLink_GetAnnotRect(link, ctypes.byref(rect)):
            bounded = textpage.get_text_bounded(rect.left, rect.bottom, rect.right, rect.top)
            text = " ".join(bounded.split()) or None
        found.append((target, text, None, "a"))
    return found
