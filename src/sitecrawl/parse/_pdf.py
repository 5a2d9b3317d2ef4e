"""A PDF body -> record fields (pure: bytes in, values out), with pypdfium2 (the ``pdf`` extra).

pypdfium2 is PDFium, Chromium's PDF engine, in one wheel: of the three libraries measured it
read a 100-page PDF in the least CPU by far, with the best word-level F1 against the HTML the
PDF was printed from (``bench/RESULTS.md`` section 22, ``bench/pdf_bench.py``).

The Markdown is each page's text in page order, every page after a ``<!-- page N -->``
comment on a line of its own (a comment shows nothing when rendered and keeps the page
number for a reader to cite; a horizontal rule after a line of text would turn it into a
heading). A page's lines keep PDFium's order; where each line's baseline is and its font
size make the paragraphs (a gap larger than the line spacing) and the headings (a font
larger than the body's): see :func:`_markdown`. Lines that Markdown would read as markup
(``#``, ``>``, ``-``, ``*``, ``+``, ``|``, ``<``, ``=``, a fence) are escaped with a backslash.

The links are the URI actions of the link annotations, resolved against the PDF's URL (a
relative URI is rare, but allowed), http(s) only, fragments dropped, as an HTML page's; each
link's text is the page's text under the annotation's rectangle.
"""

from __future__ import annotations

import ctypes
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

from .._exceptions import MissingExtra, PdfBroken, PdfEncrypted
from .._models import Link
from .._urls import join
from ._words import count_words

INSTALL_HINT = "pip install 'sitecrawl[pdf]'"
#: A title taken from the first line is cut at this many characters.
TITLE_CHARS = 300
_MARKUP_START = re.compile(r"^(?=[#>*+|<=-]|`{3}|~{3})", re.MULTILINE)
#: What PDFium puts in a page's text that is not text: NULs, the marks of a hyphen at a line's
#: end (``\x02``) and of a soft break (U+FFFE), byte-order marks.
_DROP = dict.fromkeys(map(ord, "\x00\x02\ufffe\ufeff"))


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
    pages: list[list[_Line]] = []
    links: list[Link] = []
    for number in range(len(doc)):
        page = doc[number]
        try:
            textpage = page.get_textpage()
            try:
                pages.append(_page_lines(raw, textpage))
                links.extend(_page_links(raw, doc, page, textpage, url))
            finally:
                textpage.close()
        finally:
            page.close()
    texts = ["\n".join(line.text for line in lines) for lines in pages]
    title = (doc.get_metadata_value("Title") or "").strip() or _first_line(texts)
    markdown = "\n\n".join(
        f"<!-- page {n} -->\n\n{text}".rstrip() for n, text in enumerate(_markdown(pages), 1)
    )
    return PdfText(
        title=title,
        page_count=len(pages),
        markdown=markdown + "\n" if markdown else "",
        word_count=sum(count_words(text) for text in texts),
        outgoing_links=list(dict.fromkeys(target for target, _, _, _ in links)),
        links=links,
    )


@dataclass(slots=True)
class _Line:
    """One line of a page's text, where its baseline is (``y``, up from the page's foot) and
    its first character's font size; both 0 when not known."""

    text: str
    y: float = 0.0
    size: float = 0.0


def _page_lines(raw: Any, textpage: Any) -> list[_Line]:
    """The page's lines as PDFium orders them (``\\r\\n`` between two), cleaned: NULs and the
    marks it puts for hyphens and soft breaks out, spaces trimmed. Where each line is comes
    from its first character, when the text's length is the page's count of characters (a
    character outside the BMP counts twice in the text: then the lines are plain)."""
    text = textpage.get_text_range()
    handle = textpage.raw
    aligned = len(text) == raw.FPDFText_CountChars(handle)
    origin, font_size = raw.FPDFText_GetCharOrigin, raw.FPDFText_GetFontSize
    x, y = ctypes.c_double(), ctypes.c_double()
    at_x, at_y = ctypes.byref(x), ctypes.byref(y)
    lines = []
    index = 0
    for part in text.split("\r\n"):
        line = _Line(" ".join(part.translate(_DROP).split()))
        if aligned and line.text:
            first = index + len(part) - len(part.lstrip())
            if origin(handle, first, at_x, at_y):
                line.y = y.value
                line.size = font_size(handle, first)
        lines.append(line)
        index += len(part) + 2
    while lines and not lines[-1].text:
        lines.pop()
    return lines


def _markdown(pages: list[list[_Line]]) -> list[str]:
    """Each page's Markdown: its lines in paragraphs, a new one where the gap to the line
    before is a third more than the page's line spacing (:func:`_line_spacing`; or the text
    goes up: another column), and lines in a font a fifth larger than the body's (the size
    most characters have) as headings, ``#`` for the largest size, ``##`` for the next, down
    to ``######``. Lines Markdown would read as markup are escaped."""
    sizes: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            sizes[round(line.size, 1)] += len(line.text)
    body = sizes.most_common(1)[0][0] if sizes else 0.0
    larger = sorted((size for size in sizes if body and size >= body * 1.2), reverse=True)
    levels = {size: min(n, 6) for n, size in enumerate(larger, 1)}
    out = []
    for lines in pages:
        step = _line_spacing(lines)
        blocks: list[str] = []
        current: list[str] = []
        level = 0
        previous: _Line | None = None
        for line in lines:
            here = levels.get(round(line.size, 1), 0) if len(line.text) <= 200 else 0
            if (
                previous is None
                or not line.text
                or here != level
                or _apart(previous, line, step, body)
            ):
                _flush(blocks, current, level)
                current, level = [], here
            if line.text:
                current.append(line.text)
            previous = line if line.text else None
        _flush(blocks, current, level)
        out.append("\n\n".join(blocks))
    return out


def _line_spacing(lines: list[_Line]) -> float:
    """The page's line spacing: the smallest gap between two lines' baselines that is seen
    more than once (to half a point; a lone smaller one is a sub- or superscript), else the
    smallest; 0 when no line is below another."""
    gaps = Counter(
        round((a.y - b.y) * 2) / 2 for a, b in pairwise(lines) if a.text and b.text and a.y > b.y
    )
    return min((gap for gap, seen in gaps.items() if seen > 1), default=min(gaps, default=0.0))


def _apart(above: _Line, line: _Line, step: float, body: float) -> bool:
    """True when ``line`` begins another block than the line ``above`` it."""
    if not step or not (above.y and line.y):
        return False
    scale = line.size / body if body and line.size > body else 1.0
    return above.y < line.y or above.y - line.y > step * scale * 1.3


def _flush(blocks: list[str], lines: list[str], level: int) -> None:
    if not lines:
        return
    if level:
        blocks.append("#" * level + " " + " ".join(lines))
    else:
        blocks.append(_MARKUP_START.sub(_escape, "\n".join(lines)))


def _escape(_: re.Match[str]) -> str:
    return "\\"


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
