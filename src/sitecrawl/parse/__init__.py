"""Parsing pages: HTML and PDF -> record fields (pure), the parser processes, word count."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._decode import decode_html as decode_html
    from ._extract import Extracted as Extracted
    from ._extraction import Extraction as Extraction
    from ._extraction import Rule as Rule
    from ._extraction import convert as convert
    from ._extraction import load_rules_file as load_rules_file
    from ._extraction import parse_specs as parse_specs
    from ._extraction import stored_rules as stored_rules
    from ._pdf import PdfText as PdfText
    from ._pdf import pdf_available as pdf_available
    from ._pdf import read_pdf as read_pdf
    from ._pool import Parser as Parser

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "Extracted": "._extract",
    "Extraction": "._extraction",
    "Parser": "._pool",
    "PdfText": "._pdf",
    "Rule": "._extraction",
    "convert": "._extraction",
    "decode_html": "._decode",
    "load_rules_file": "._extraction",
    "parse_specs": "._extraction",
    "pdf_available": "._pdf",
    "read_pdf": "._pdf",
    "stored_rules": "._extraction",
}

__all__ = [
    "Extracted",
    "Extraction",
    "Parser",
    "PdfText",
    "Rule",
    "convert",
    "decode_html",
    "load_rules_file",
    "parse_specs",
    "pdf_available",
    "read_pdf",
    "stored_rules",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
