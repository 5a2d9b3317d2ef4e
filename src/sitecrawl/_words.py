"""Word counting: the compiled loop in ``_speedups`` when it was built, else the same count
in Python (~15x slower on a page's text; the tests hold the two to the same answers)."""

from __future__ import annotations

__all__ = ["count_words", "count_words_py"]

# ASCII whitespace -> " ", every other byte -> "x": a word starts at each " x".
_WORD_BYTES = bytes(0x20 if chr(i) in " \t\n\r\x0b\x0c" else 0x78 for i in range(256))


def count_words_py(text: str) -> int:
    """The runs of characters between ASCII whitespace (``\\t \\n \\v \\f \\r`` and space):
    ``len(text.encode().split())`` without a bytes object per word."""
    data = (" " + text).encode("utf-8", "surrogatepass")
    return data.translate(_WORD_BYTES).count(b" x")


try:
    from ._speedups import count_words
except ImportError:  # installed without a C compiler
    count_words = count_words_py
