"""The compiled word counter against its Python twin and an independent oracle."""

from __future__ import annotations

import random
import re

import pytest

from sitecrawl import _words

# The oracle: a word is a run of characters that are not ASCII whitespace.
_WORD = re.compile(r"[^\t\n\x0b\x0c\r ]+")

# Every storage width of str (1, 2 and 4 bytes a character), whitespace that is not ASCII
# (which joins words here), a lone surrogate, and the control characters str.split() would
# also split on but ASCII whitespace does not include.
_ALPHABET = [
    *"ab \t\n\x0b\x0c\r",
    *"\x1c\x1f\x85\xa0\xe9",
    *"\u2003\u3000\u00e9\u4e2d",
    "\U0001f600",
    "\ud800",
]


def _texts() -> list[str]:
    rng = random.Random(6)
    texts = ["", " ", "a", " a", "a ", "\t\n", "one  two\tthree\nfour", "x" * 1000]
    for size in (1, 2, 3, 7, 64, 5000):
        for _ in range(40):
            texts.append("".join(rng.choices(_ALPHABET, k=size)))
    # Narrow alphabets so each storage width is exercised on its own, long enough to run
    # the vectorized part of the loop and its tail.
    for alphabet in (" ab\t", " ab\u4e2d\u3000", " ab\U0001f600\xa0"):
        for size in (15, 16, 17, 31, 33, 4099):
            texts.append("".join(rng.choices(alphabet, k=size)))
    return texts


def test_the_compiled_counter_is_built() -> None:
    """CI builds the C module (pip compiles it at install); losing it silently would cost
    the crawl ~15-20 % of its pages/s."""
    from sitecrawl._speedups import count_words

    assert _words.count_words is count_words


@pytest.mark.parametrize("name", ["compiled", "python"])
def test_counts_runs_between_ascii_whitespace(name: str) -> None:
    if name == "compiled":
        from sitecrawl._speedups import count_words
    else:
        count_words = _words.count_words_py
    for text in _texts():
        assert count_words(text) == len(_WORD.findall(text)), repr(text[:80])


def test_the_compiled_counter_takes_only_str() -> None:
    from sitecrawl._speedups import count_words

    with pytest.raises(TypeError, match="takes a str, not bytes"):
        count_words(b"two words")  # type: ignore[arg-type]
