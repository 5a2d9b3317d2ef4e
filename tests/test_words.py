"""The compiled word counter against its Python twin and the definition, ``str.split()``."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable

import pytest

from sitecrawl.parse import _words
from speedups import require_speedups

#: Every character ``str.split()`` splits on (29 of them).
UNICODE_SPACES = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())

# One alphabet per storage width of str (1 byte ASCII, 1 byte Latin-1, 2 and 4 bytes a
# character), each with every whitespace character that width can hold, and letters,
# ASCII controls that are not whitespace, and a lone surrogate.
_LATIN1_SPACES = "".join(c for c in UNICODE_SPACES if ord(c) < 256)
_ALPHABETS = [
    "ab\x00\x08\x0e\x1b\x7f" + "".join(c for c in UNICODE_SPACES if ord(c) < 128),
    "ab\x1b\xe9\xff\x84\x86\x9f\xa1" + _LATIN1_SPACES,
    "ab\u4e2d\u2019\u200b\u200c\u2027\u202a\u205e\u2060\u3001\u167f\u1681\ufeff" + UNICODE_SPACES,
    "ab\U0001f600\ud800\u4e2d\U00012000\U00102000" + UNICODE_SPACES,
]


def _texts() -> list[str]:
    rng = random.Random(6)
    texts = ["", " ", "a", " a", "a ", "\t\n", "one  two\tthree\nfour", "x" * 1000]
    texts += [f"a{space}b" for space in UNICODE_SPACES]
    texts += [space for space in UNICODE_SPACES] + [UNICODE_SPACES, "a" + UNICODE_SPACES]
    for alphabet in _ALPHABETS:
        # Sizes around the compiled loop's blocks (256 characters) and vector widths.
        for size in (1, 2, 3, 7, 15, 16, 17, 31, 33, 64, 255, 256, 257, 513, 5000):
            for _ in range(10):
                texts.append("".join(rng.choices(alphabet, k=size)))
        # Long runs of one kind: words longer than a block, spaces longer than a block.
        texts.append("a" * 300 + alphabet[-1] * 300 + "b" * 300)
    return texts


def _compiled() -> Callable[[str], int]:
    require_speedups()
    from sitecrawl._speedups import count_words

    return count_words


def test_the_compiled_counter_is_used() -> None:
    """Losing it silently would cost the crawl a part of its pages/s."""
    assert _words.count_words is _compiled()


@pytest.mark.parametrize("name", ["compiled", "python"])
def test_counts_words_as_str_split_does(name: str) -> None:
    count_words = _compiled() if name == "compiled" else _words.count_words_py
    for text in _texts():
        assert count_words(text) == len(text.split()), repr(text[:80])


def test_the_compiled_counter_takes_only_str() -> None:
    count_words = _compiled()
    with pytest.raises(TypeError, match="takes a str, not bytes"):
        count_words(b"two words")  # type: ignore[arg-type]
