"""Word counting: the compiled loop in ``_speedups`` when it was built, else the same count
in Python (the tests hold the two to the same answers).

A word is a run of characters between whitespace as ``str.split()`` sees it: every
character for which ``str.isspace()`` is true (no-break space, the Unicode spaces and
separators, ``\\x1c``-``\\x1f``, ...), as a browser's text reads them.
"""

from __future__ import annotations

__all__ = ["count_words", "count_words_py"]

# ASCII whitespace (str.isspace()'s ASCII part) -> " ", every other byte -> "x": a word
# starts at each " x".
_WORD_BYTES = bytes(0x20 if chr(i).isspace() and i < 128 else 0x78 for i in range(256))


def count_words_py(text: str) -> int:
    """``len(text.split())``; for ASCII text, without making the words."""
    if text.isascii():
        return (" " + text).encode("ascii").translate(_WORD_BYTES).count(b" x")
    return len(text.split())


try:
    from .._speedups import count_words
except ImportError:  # installed without a C compiler
    count_words = count_words_py
