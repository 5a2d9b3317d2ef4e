"""What changed between two crawls of a site: a merge of two crawls' pages sorted by URL key,
two rows at a time. No I/O: the rows come from the store (:func:`diff_rows`), the changes go
to whoever prints or writes them.

A change is one row: ``url``, ``kind``, ``field``, ``old``, ``new``, ``severity``. The kinds,
most severe first (:data:`KINDS`): ``new-broken`` (a URL that answers an error now and did not,
with the pages linking to it), ``status``, ``removed``, ``blocked`` (newly blocked by
robots.txt), ``redirect`` (another redirect target: the fields of the page it leads to are
not compared), ``noindex`` (``indexable`` changed),
``canonical``, ``added``, ``title``, ``h1``, ``meta-description``, ``word-count`` (more than
:data:`WORD_THRESHOLD` of the words, and at least :data:`WORD_MIN`), ``extracted`` (a custom
extraction's value, one row per rule: field ``x:NAME``), ``body`` (another body hash).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

#: Kind -> severity, most severe first.
KINDS: dict[str, str] = {
    "new-broken": "error",
    "status": "error",
    "removed": "warning",
    "blocked": "warning",
    "redirect": "warning",
    "noindex": "warning",
    "canonical": "warning",
    "added": "info",
    "title": "info",
    "h1": "info",
    "meta-description": "info",
    "word-count": "info",
    "extracted": "info",
    "body": "info",
}
#: ``--fail-on``'s default: new broken links and pages that stopped answering 200.
DEFAULT_FAIL_ON = ("new-broken", "status")
WORD_THRESHOLD = 0.2
WORD_MIN = 10

#: The columns a diff reads of each page (besides ``key`` and ``url``), in this order.
COLUMNS = (
    "status",
    "final_url",
    "error_kind",
    "indexable",
    "canonical",
    "title",
    "h1",
    "meta_description",
    "word_count",
    "body_hash",
    "redirects",
    "extracted",
)
Row = tuple[Any, ...]  # (key, url, *COLUMNS)
_TEXT = (("title", 7), ("h1", 8), ("meta-description", 9))


@dataclass(frozen=True, slots=True)
class Change:
    url: str
    kind: str
    field: str | None
    old: Any
    new: Any

    @property
    def severity(self) -> str:
        return KINDS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "kind": self.kind,
            "field": self.field,
            "old": self.old,
            "new": self.new,
            "severity": self.severity,
        }


def broken(row: Row) -> bool:
    """A page that answers an error (HTTP 4xx/5xx, or no answer), robots.txt aside."""
    status, error_kind = row[2], row[4]
    if error_kind in ("blocked_robots", "robots_unreachable", "redirect_out_of_scope"):
        return False
    return (status is not None and status >= 400) or (status is None and error_kind is not None)


def merge(old: Iterable[Row], new: Iterable[Row]) -> Iterator[Change]:
    """The changes from crawl ``old`` to crawl ``new``, both sorted by key, in key order
    (``new-broken`` changes have no referrers yet: see :func:`with_referrers`)."""
    olds, news = iter(old), iter(new)
    a, b = next(olds, None), next(news, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a[0] < b[0]):
            assert a is not None
            yield Change(a[1], "removed", None, a[2], None)
            a = next(olds, None)
        elif a is None or b[0] < a[0]:
            if broken(b):
                yield Change(b[1], "new-broken", "status", None, b[2] or b[4])
            else:
                yield Change(b[1], "added", None, None, b[2])
            b = next(news, None)
        else:
            yield from compare(a, b)
            a, b = next(olds, None), next(news, None)


def compare(a: Row, b: Row) -> Iterator[Change]:
    """The changes of one URL crawled twice."""
    url = b[1]
    if broken(b) and not broken(a):
        yield Change(url, "new-broken", "status", a[2] or a[4], b[2] or b[4])
    if a[2] != b[2]:
        yield Change(url, "status", "status", a[2], b[2])
    if b[4] == "blocked_robots" and a[4] != "blocked_robots":
        yield Change(url, "blocked", "error_kind", a[4], b[4])
        return
    if (a[12] or b[12]) and a[3] != b[3]:
        yield Change(url, "redirect", "final_url", a[3], b[3])
        return  # another page answers now: its fields are not this URL's changes
    if a[5] != b[5] and a[5] is not None and b[5] is not None:
        yield Change(url, "noindex", "indexable", bool(a[5]), bool(b[5]))
    if a[6] != b[6]:
        yield Change(url, "canonical", "canonical", a[6], b[6])
    for kind, i in _TEXT:
        if a[i] != b[i]:
            yield Change(url, kind, COLUMNS[i - 2], a[i], b[i])
    words_a, words_b = a[10], b[10]
    if words_a is not None and words_b is not None:
        moved = abs(words_b - words_a)
        if moved >= WORD_MIN and moved > WORD_THRESHOLD * words_a:
            yield Change(url, "word-count", "word_count", words_a, words_b)
    if a[13] != b[13]:
        before, after = _extracted(a[13]), _extracted(b[13])
        for name in sorted(before.keys() | after.keys()):
            if before.get(name) != after.get(name):
                yield Change(url, "extracted", f"x:{name}", before.get(name), after.get(name))
    if a[11] is not None and b[11] is not None and a[11] != b[11]:
        yield Change(url, "body", "body_hash", a[11], b[11])


def _extracted(stored: Any) -> dict[str, Any]:
    """A page's stored custom extraction values (a JSON object, or nothing)."""
    if isinstance(stored, dict):
        return stored
    value = json.loads(stored) if stored else {}
    return value if isinstance(value, dict) else {}


def ordered(changes: Iterable[Change]) -> list[Change]:
    """Most severe first (the order of :data:`KINDS`), then by URL."""
    rank = {kind: n for n, kind in enumerate(KINDS)}
    return sorted(changes, key=lambda change: (rank[change.kind], change.url))
