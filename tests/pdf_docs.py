"""Real PDFs for the tests and the bench: HTML printed by headless Chromium (Playwright's
``page.pdf()``), which writes a link annotation for every ``<a href>`` it lays out and the
document's ``<title>`` as the PDF's Title.

The prose is real English: the license texts Debian ships in every installation
(``/usr/share/common-licenses``, from the essential package base-files), cut into paragraphs.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import Browser

from browser import launch_chromium

LICENSES = Path("/usr/share/common-licenses")
#: Print options: A4 with the browser's header and footer off (no date or URL on each page).
PRINT = {"format": "A4", "print_background": False, "display_header_footer": False}


def paragraphs() -> list[tuple[str, list[str]]]:
    """``(license name, its paragraphs)`` for each license text, in name order."""
    found = []
    for path in sorted(LICENSES.iterdir()):
        if path.is_symlink() or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        paras = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text)]
        found.append((path.name, [p for p in paras if len(p.split()) >= 5]))
    if not found:
        raise RuntimeError(f"no license texts in {LICENSES} (Debian's base-files)")
    return found


def page(title: str, body: str, *, base: str | None = None) -> str:
    head = f'<base href="{html.escape(base)}">' if base else ""
    style = "body{font:11pt/1.35 'Liberation Serif',serif;margin:0}h1,h2{font-family:sans-serif}"
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8>{head}"
        f"<title>{html.escape(title)}</title><style>{style}</style></head>"
        f"<body>{body}</body></html>"
    )


def report_html(links: Mapping[str, str], *, title: str = "Annual Report 2026") -> str:
    """A short document: a heading, a few paragraphs, a list, a table, and one paragraph
    per link (``href -> text``), each link in a sentence of its own."""
    (_, first), *_ = paragraphs()
    body = [f"<h1>{html.escape(title)}</h1>", *(f"<p>{html.escape(p)}</p>" for p in first[:6])]
    body.append("<ul><li>First point</li><li>Second point</li><li>Third point</li></ul>")
    body.append(
        "<table><tr><th>Year</th><th>Pages</th></tr><tr><td>2025</td><td>12</td></tr>"
        "<tr><td>2026</td><td>14</td></tr></table>"
    )
    for href, text in links.items():
        body.append(f'<p>See <a href="{html.escape(href)}">{html.escape(text)}</a> for more.</p>')
    return page(title, "".join(body))


def long_html(words: int, *, title: str = "Licenses", link_every: int = 20) -> str:
    """About ``words`` words of prose (the license texts, again from the start when they run
    out), an ``<h2>`` per license, and a link to ``/section/N.html`` in every
    ``link_every``-th paragraph."""
    body = [f"<h1>{html.escape(title)}</h1>"]
    count = n = 0
    while count < words:
        for name, paras in paragraphs():
            body.append(f"<h2>{html.escape(name)}</h2>")
            for para in paras:
                n += 1
                text = html.escape(para)
                if n % link_every == 0:
                    text += f' <a href="/section/{n}.html">Section {n}</a>'
                body.append(f"<p>{text}</p>")
                count += len(para.split())
                if count >= words:
                    break
            if count >= words:
                break
    return page(title, "".join(body))


@contextmanager
def printer() -> Iterator[Browser]:
    """Headless Chromium to print with (:func:`print_pdf`)."""
    with launch_chromium() as browser:
        yield browser


def print_pdf(
    browser: Browser,
    *,
    url: str | None = None,
    source: str | None = None,
    base: str = "",
    margin: Mapping[str, str] | None = None,
) -> bytes:
    """The PDF Chromium prints of the page at ``url``, or of the HTML ``source`` (its
    relative links resolved against ``base``, when given, through a ``<base>`` element);
    ``margin``: the page's (``{"top": "2cm", ...}``; default none)."""
    tab = browser.new_page()
    try:
        if url is not None:
            tab.goto(url)
        else:
            assert source is not None
            if base:
                source = source.replace("<head>", f'<head><base href="{html.escape(base)}">', 1)
            tab.set_content(source)
        return tab.pdf(**PRINT, margin=dict(margin or {}))  # type: ignore[arg-type]
    finally:
        tab.close()


def inner_text(browser: Browser, source: str) -> str:
    """The text a reader sees of ``source``: Chromium's ``innerText`` of its body."""
    tab = browser.new_page()
    try:
        tab.set_content(source)
        return str(tab.evaluate("document.body.innerText"))
    finally:
        tab.close()


def repeat_pages(pdf: bytes, times: int) -> bytes:
    """``pdf``'s pages ``times`` over, in one PDF (PDFium copies the pages as they are)."""
    import pypdfium2

    source = pypdfium2.PdfDocument(pdf)
    out = pypdfium2.PdfDocument.new()
    for _ in range(times):
        out.import_pages(source)
    buffer = io.BytesIO()
    out.save(buffer)
    out.close()
    source.close()
    return buffer.getvalue()


def encrypt(pdf: bytes, *, user_password: str, owner_password: str = "owner") -> bytes:
    """``pdf`` encrypted by pypdf (RC4-128: no other package needed); an empty
    ``user_password`` makes a PDF anyone can read but with an owner password."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password, owner_password, algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def with_link(pdf: bytes, uri: str) -> bytes:
    """``pdf`` with one more link annotation on its first page, to ``uri`` as given
    (Chromium writes absolute URIs only; a PDF may hold a relative one)."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.annotations import Link

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.add_annotation(page_number=0, annotation=Link(rect=(50, 50, 200, 70), url=uri))
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def retitle(pdf: bytes, title: str) -> bytes:
    """``pdf`` with ``title`` as its metadata's Title (pypdf)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.add_metadata({"/Title": title})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()
