"""Bytes -> HTML text: the charset a body declares (BOM, HTTP header, ``<meta>``), else the one a
detector reads, and the decoded text. Pure."""

from __future__ import annotations

import codecs
import re

_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _charset_ok(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _declared_charset(body: bytes, http_charset: str | None) -> str | None:
    """BOM, then the HTTP charset, then ``<meta>`` in the first KiB; None if none is usable.
    (A BOM beats the header, as in the WHATWG encoding sniffing algorithm.)"""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    if http_charset and (found := _charset_ok(http_charset)):
        return found
    match = _META_CHARSET.search(body, 0, 1024)
    if match and (found := _charset_ok(match.group(1).decode("ascii"))):
        # A document cannot declare itself UTF-16 in a <meta> it could be read from as ASCII.
        return "utf-8" if found.startswith("utf-16") else found
    return None


# Encodings the detector may pick for undeclared bodies, most common on the web first: among
# equally plausible readings the earlier wins (so French in cp1252 is not read as cp1257).
_DETECTABLE = (
    "cp1252",
    "cp932",
    "euc_jp",
    "gb18030",
    "big5",
    "euc_kr",
    "cp1251",
    "koi8_r",
    "cp1250",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp874",
    "cp1258",
)
_LATIN1_LABELS = frozenset({"iso8859-1", "cp1252", "ascii"})


def detect_charset(body: bytes) -> str:
    """Guess the encoding of a body that is not UTF-8 and declares nothing usable
    (charset-normalizer on the first 64 KiB; Windows-1252 when it has no idea)."""
    from charset_normalizer import from_bytes

    results = from_bytes(body[:65536], cp_isolation=list(_DETECTABLE))
    if not results:
        return "cp1252"
    least = min(result.chaos for result in results)
    plausible = {
        name
        for result in results
        if result.chaos <= least + 0.05
        for name in result.could_be_from_charset
    }
    return next((name for name in _DETECTABLE if name in plausible), results[0].encoding)


def decode_html(body: bytes, http_charset: str | None = None) -> str:
    """Decode an HTML body to text, never failing: undecodable bytes become U+FFFD.

    The encoding: BOM, HTTP charset, ``<meta>``, then a detector. Two mislabels are caught
    because they are cheap to prove: a body labelled (or defaulting to) UTF-8 that is not
    valid UTF-8 goes to the detector, and a body labelled Latin-1/Windows-1252/ASCII that is
    valid UTF-8 with non-ASCII bytes is read as UTF-8 (real Latin-1 text almost never is).
    A valid UTF-8 body is decoded once. NUL characters are dropped, as the tree builder drops
    them from body text anyway: Lexbor spends ~18 bytes of memory on each, so a body of NULs
    (a compression bomb of zeros) would cost many times the body cap.
    """
    declared = _declared_charset(body, http_charset)
    if declared is None or declared == "utf-8" or declared in _LATIN1_LABELS:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            fallback = declared if declared not in (None, "utf-8") else detect_charset(body)
            text = body.decode(fallback or "cp1252", errors="replace")
    else:
        text = body.decode(declared, errors="replace")
    if "\0" in text:
        text = text.replace("\0", "")
    return text[1:] if text.startswith("\ufeff") else text
