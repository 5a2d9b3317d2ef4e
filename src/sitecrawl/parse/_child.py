"""A parser process: ``python -m sitecrawl.parse._child PARENT_PID`` on two channels (see
:mod:`._pool`); it dies with its parent (:func:`~sitecrawl._channels.die_with_parent`).

Kept apart from the event-loop side so that a new child imports only what parsing needs
(no asyncio), and says when it is ready: until then the event
loop parses pages itself instead of queueing them behind the child's imports.

The first frame on its stdin is its setup (:func:`setup_frame`): length-prefixed JSON saying
whether to fill :attr:`Extracted.links` for every page, which custom extraction rules to
run on every page and whether to make its Markdown (the scope, or None). (Not its command
line: rules of more than 128 KiB passed the kernel's limit on one argument.) Then each job
(:func:`job_frame`) is a header with two sizes, the ``marshal``-ed ``(charset, url, kind)``
and the body's bytes as they are; ``kind`` is ``"html"``, or ``"pdf"`` for a PDF to read
(:mod:`._pdf`). An answer is length-prefixed ``marshal`` data: ``None`` once, when the child
is ready; then, for each job in order, the tuple of the :class:`Extracted` attributes (the
record's fields, a dict, first; a dict of the :class:`~._pdf.PdfText` fields for a PDF), or
``[url, message, error kind]`` when the page could not be parsed.
"""

from __future__ import annotations

import signal

if __name__ == "__main__":
    # First, before the imports: Ctrl-C in a terminal reaches the whole process group, and the
    # parent decides how to stop (it finishes the pages in flight, then closes our stdin: we
    # end when it does). The parent also starts us in a session of our own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

import contextlib
import json
import marshal
import os
import struct
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, BinaryIO

from .._channels import die_with_parent
from .._exceptions import MissingExtra, ParseError, PdfBroken
from .._urls import JoinCache
from ._content import Scope, page_markdown
from ._decode import decode_html
from ._extract import Extracted, parse_html
from ._extraction import Extraction, Rule
from ._markup import markup_reason

if TYPE_CHECKING:
    from ._pdf import PdfText

LENGTH = struct.Struct("!I")
#: A job's header: the sizes of its marshalled ``(charset, url, kind)`` and of its body.
JOB = struct.Struct("!II")
_joins = JoinCache()  # one per process


def parse_body(
    body: bytes,
    charset: str | None,
    url: str,
    link_details: bool = False,
    extraction: Extraction | None = None,
    markdown: Scope | None = None,
    structured_data: bool = False,
    near_duplicates: bool = False,
    requisites: bool = False,
) -> Extracted:
    """Decode and parse one HTML body (runs in whichever process calls it); ``link_details``:
    also each link's text and rel (:attr:`Extracted.links`); ``markdown``: also the content
    as Markdown of that scope (the record's ``markdown`` field; a failure is
    :attr:`Extracted.markdown_error`); ``near_duplicates``: also the content's signature
    (``content_hash``, ``content_minhash``: of the Markdown when made, else of the body text
    without boilerplate; :mod:`._signature`); ``requisites``: also what the page makes a
    browser load that its links do not name (:attr:`Extracted.requisites`). Raises
    :class:`ParseError` for markup that would cost the parser more than
    :data:`~._markup.BUDGET` (see :mod:`._markup`)."""
    text = decode_html(body, charset)
    # The scan reads markup as ASCII bytes: UTF-16 and UTF-32 bodies (NULs) as UTF-8 again.
    reason = markup_reason(text.encode("utf-8", "replace") if b"\0" in body else body)
    if reason is not None:
        raise ParseError(reason, url=url)
    data = parse_html(
        text,
        url,
        _joins,
        link_details=link_details,
        extraction=extraction,
        structured_data=structured_data,
        content_signature=near_duplicates and markdown is None,
        requisites=requisites,
    )
    if markdown is not None:
        try:
            data.fields["markdown"] = content = page_markdown(text, url, scope=markdown)
        except Exception as exc:  # the converters' boundary: the other fields stay
            data.markdown_error = f"no Markdown: {exc!r}"
        else:
            if near_duplicates:
                from ._signature import content_signature  # (near-duplicates: when asked)

                signed = content_signature(content or "")
                data.fields["content_hash"], data.fields["content_minhash"] = signed
    return data


def parse_or_error(
    body: bytes,
    charset: str | None,
    url: str,
    link_details: bool,
    extraction: Extraction | None = None,
    markdown: Scope | None = None,
    structured_data: bool = False,
    near_duplicates: bool = False,
    requisites: bool = False,
) -> Extracted:
    """:func:`parse_body`, with whatever the parser raises turned into :class:`ParseError`:
    one unreadable page is a record with an error, not the end of the crawl."""
    try:
        return parse_body(
            body,
            charset,
            url,
            link_details,
            extraction,
            markdown,
            structured_data,
            near_duplicates,
            requisites,
        )
    except ParseError:
        raise
    except Exception as exc:  # the parsing boundary: Lexbor, ada-url, codecs
        raise ParseError(f"could not parse: {exc!r}", url=url) from exc


def read_pdf_or_error(body: bytes, url: str) -> PdfText:
    """:func:`~._pdf.read_pdf`, with whatever else PDFium raises turned into
    :class:`PdfBroken`, and a missing extra into :class:`ParseError`."""
    from ._pdf import read_pdf  # (ctypes and PDFium: only in a child that reads PDFs)

    try:
        return read_pdf(body, url)
    except ParseError:
        raise
    except MissingExtra as exc:
        raise ParseError(str(exc), url=url) from None
    except Exception as exc:  # the reading boundary: PDFium through ctypes
        raise PdfBroken(f"PDF could not be read: {exc!r}", url=url) from exc


def job_frame(
    body: bytes, charset: str | None, url: str, kind: str = "html"
) -> tuple[bytes, bytes]:
    """A job as two buffers to write one after the other: the header and metadata, then the
    body itself, not copied into a frame."""
    meta = marshal.dumps((charset, url, kind))
    return JOB.pack(len(meta), len(body)) + meta, body


def setup_frame(
    link_details: bool,
    extraction: Extraction | None,
    markdown: Scope | None = None,
    structured_data: bool = False,
    near_duplicates: bool = False,
    requisites: bool = False,
) -> bytes:
    """The first frame a child reads: ``link_details``, the rules, the Markdown scope (None:
    no Markdown), ``structured_data``, ``near_duplicates`` and ``requisites``, as
    length-prefixed JSON."""
    rules = [rule.to_json() for rule in extraction.rules] if extraction else []
    setup = {
        "link_details": link_details,
        "extract": rules,
        "markdown": markdown,
        "structured_data": structured_data,
        "near_duplicates": near_duplicates,
        "requisites": requisites,
    }
    encoded = json.dumps(setup).encode()
    return LENGTH.pack(len(encoded)) + encoded


def read_setup(
    stdin: BinaryIO,
) -> tuple[bool, Extraction | None, Scope | None, bool, bool, bool] | None:
    """The setup written by :func:`setup_frame`; None when the parent closed the channel
    before (it was stopped while we started)."""
    header = stdin.read(LENGTH.size)
    if len(header) < LENGTH.size:
        return None
    (size,) = LENGTH.unpack(header)
    setup = json.loads(stdin.read(size))
    rules = [Rule(**item) for item in setup["extract"]]
    markdown = setup.get("markdown")
    extraction = Extraction(rules) if rules else None
    structured_data = bool(setup.get("structured_data"))
    near_duplicates = bool(setup.get("near_duplicates"))
    requisites = bool(setup.get("requisites"))
    link_details = bool(setup["link_details"])
    return link_details, extraction, markdown, structured_data, near_duplicates, requisites


def _write(stdout: BinaryIO, answer: bytes) -> None:
    stdout.write(LENGTH.pack(len(answer)) + answer)
    stdout.flush()


def serve(stdin: BinaryIO, stdout: BinaryIO) -> None:
    """The child's loop: read the setup, say ready, then read a frame, parse, answer; until
    the parent closes the pipe."""
    if (setup := read_setup(stdin)) is None:
        return
    markdown = setup[2]
    if markdown is not None:  # the converters imported before the child says it is ready
        with contextlib.suppress(ImportError):  # (the parent checked; else: each page says)
            from . import _content_tree  # noqa: F401
    _write(stdout, marshal.dumps(None))
    while header := stdin.read(JOB.size):
        meta_size, body_size = JOB.unpack(header)
        charset, url, kind = marshal.loads(stdin.read(meta_size))
        body = stdin.read(body_size)
        try:
            if kind == "pdf":
                answer = marshal.dumps(asdict(read_pdf_or_error(body, url)))
            else:
                # the setup is parse_or_error's options, in its order (read_setup's answer)
                answer = marshal.dumps(parse_or_error(body, charset, url, *setup).wire())
        except ParseError as exc:
            answer = marshal.dumps([url, str(exc), exc.kind])
        _write(stdout, answer)


if __name__ == "__main__":
    die_with_parent(int(sys.argv[1]))
    with contextlib.suppress(BrokenPipeError):  # the parent is gone: nobody to answer
        serve(sys.stdin.buffer, sys.stdout.buffer)
    # Every answer is written and flushed, and the process holds nothing else: skip the
    # interpreter's teardown, which the parent would wait for at the end of each crawl, as
    # multiprocessing's workers do.
    os._exit(0)
