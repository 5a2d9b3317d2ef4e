"""Text fit for a terminal: crawled text with its control characters made visible. Pure.

A page can put anything in a title, an anchor or an alt text, and a server anything in a header:
an ESC sequence printed raw moves the cursor, recolours or retitles the user's terminal, and a
bidi override (U+202E) shows the rest of the line backwards, so a file name or URL reads as
another. :func:`printable` shows each such character as an escape (``\\x1b``, ``\\u202e``)
instead, so what is printed is what was there. Every line sitecrawl prints that holds crawled or
stored text goes through it.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included: one value stays on one line), DEL, C1 controls, and
# the bidi formatting characters: LRE, RLE, PDF, LRO, RLO (U+202A-E), LRI, RLI, FSI, PDI
# (U+2066-9), LRM, RLM (U+200E-F) and ALM (U+061C).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character and bidi control shown as an escape
    (``"a\\x1b[2Jb"`` -> ``"a\\\\x1b[2Jb"``); text without any comes back as it is."""
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)
