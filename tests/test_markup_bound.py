"""The cheap bound that lets an ordinary page skip the markup cost scan (parse/_markup.py)."""

from __future__ import annotations

import random

import pytest

from sitecrawl.parse import _markup
from sitecrawl.parse._markup import (
    BUDGET,
    bound_of,
    markup_bound,
    markup_cost_py,
    markup_counts_py,
    markup_reason,
    structured_marks_py,
)
from speedups import require_speedups
from test_bombs import ATOMS, BOMBS, FINE

NO_BUDGET = 10**18  # the scan's whole estimate, never cut short

# Attribute-heavy pieces: quotes closing values right before the next name, slashes, no spaces.
_ATTRIBUTE_ATOMS = ["<p a=\"1\"b='2'c", "d/e/f", ' g="', '"h', "=i", "'", ">", "\t", "\v", "<br"]


def _bodies(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    atoms = ATOMS + _ATTRIBUTE_ATOMS
    return [
        "".join(rng.choice(atoms) for _ in range(rng.randrange(1, 120))).encode()
        for _ in range(count)
    ]


def test_the_bound_is_never_below_the_scans_estimate() -> None:
    bodies = _bodies(5000, seed=11)
    bodies += [
        f"<html><body>{markup}</body></html>".encode() for markup in {**BOMBS, **FINE}.values()
    ]
    for body in bodies:
        assert markup_bound(body) >= markup_cost_py(body, NO_BUDGET).cost, body[:200]


def test_the_compiled_counts_and_their_python_twin_agree() -> None:
    require_speedups("sitecrawl.parse._scan")
    from sitecrawl.parse._scan import markup_counts as compiled_counts

    rng = random.Random(5)
    bodies = _bodies(2000, seed=3) + [rng.randbytes(rng.randrange(0, 3000)) for _ in range(500)]
    for body in bodies:
        assert compiled_counts(body) == markup_counts_py(body), body[:200]


def test_an_ordinary_page_skips_the_scan_and_a_bomb_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = " ".join(f"word{n % 97}" for n in range(6000))
    links = "".join(f'<li><a href="/p/{n}" class="x">link {n}</a></li>' for n in range(400))
    page = f"<html><head><title>t</title></head><body><p>{words}</p><ul>{links}</ul>"
    page = (page + "</body></html>").encode()
    assert len(page) > 40_000 and markup_bound(page) <= BUDGET
    scanned: list[bytes] = []

    def counting(body: bytes, budget: int) -> _markup.MarkupCost:
        scanned.append(body)
        return markup_cost_py(body, budget)

    monkeypatch.setattr(_markup, "markup_cost", counting)
    assert markup_reason(page) is None
    assert scanned == []  # the bound was enough
    bomb = f"<html><body>{BOMBS['deep divs']}</body></html>".encode()
    assert markup_reason(bomb) is not None
    assert scanned == [bomb]


def test_bound_of_counts_each_term() -> None:
    assert bound_of(0, 0) == 0
    assert bound_of(0, 10) == 50  # attribute pairs
    assert bound_of(3, 0) == (1 + _markup.OPTION_WEIGHT) * 9 + _markup.END_TAG_REACH * 3


def test_the_compiled_marks_and_their_python_twin_agree() -> None:
    require_speedups("sitecrawl.parse._marks")
    from sitecrawl.parse._marks import structured_marks
    from test_structured_data import _marked_texts

    texts = _marked_texts(4000, seed=9)
    texts += [" " * pad + text for pad in (0, 1, 15, 31) for text in _marked_texts(300, seed=pad)]
    found = set()
    for text in texts:
        marks = structured_marks(text)
        assert marks == structured_marks_py(text), text
        found.add(marks)
    assert found == set(range(8))  # every combination was met
