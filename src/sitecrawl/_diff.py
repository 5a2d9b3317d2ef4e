"""What changed between two crawls of a site: a merge of two crawls' pages sorted by URL key,
two rows at a time. No I/O: the rows come from the store (:func:`diff_rows`), the changes go
to whoever prints or writes them.

A change is one row: ``url``, ``kind``, ``field``, ``old``, ``new``, ``severity``, and for a
``new-broken`` one ``linking_pages`` (how many distinct pages link to it), ``linking_links``
(by how many links) and ``linked_from`` (the first of those pages). The kinds,
most severe first (:data:`KINDS`): ``new-broken`` (a URL that answers an error now and did not:
``old`` its answer before, None when it is new, ``new`` its answer now), ``status``,
``removed``, ``blocked`` (newly blocked by
robots.txt), ``redirect`` (another redirect target: the fields of the page it leads to are
not compared), ``noindex`` (``indexable`` changed),
``canonical``, ``added``, ``title``, ``h1``, ``meta-description``, ``word-count`` (more than
:data:`WORD_THRESHOLD` of the words, and at least :data:`WORD_MIN`), ``extracted`` (a custom
extraction's value, one row per rule: field ``x:NAME``), ``body`` (another body hash; for a
body the crawl did not read, as a file that is not HTML: another ``etag``, else another
``last_modified``, else another ``size_bytes``), ``content`` (another main content: the
Markdown of ``--markdown``, when both crawls made it; ``old`` and ``new`` are the first line
that differs, cut to :data:`CONTENT_LINE` characters).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import zip_longest
from typing import Any, NamedTuple

from ._pagecodec import unpack

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
    "content": "info",  # markdown (issue 31)
}
#: ``--fail-on``'s default: new broken links and pages that stopped answering 200.
DEFAULT_FAIL_ON = ("new-broken", "status")
WORD_THRESHOLD = 0.2
WORD_MIN = 10
CONTENT_LINE = 120


class DiffRow(NamedTuple):
    """One page of one crawl as a diff reads it: ``key`` and ``url``, then :data:`COLUMNS`
    (a store's row of them, named)."""

    key: str
    url: str
    status: int | None
    final_url: str | None
    error_kind: str | None
    indexable: int | None
    canonical: str | None
    title: str | None
    h1: str | None
    meta_description: str | None
    word_count: int | None
    body_hash: str | None
    redirects: int | None
    """The number of redirect hops."""
    extracted: str | dict[str, Any] | None
    """The custom extraction values: a JSON object (as stored), or a dict."""
    etag: str | None
    last_modified: str | None
    size_bytes: int | None
    markdown: bytes | str | None
    """The Markdown (issue 31): as stored (a zstd frame), or text."""


#: The columns a diff reads of each page (besides ``key`` and ``url``), in this order.
COLUMNS: tuple[str, ...] = DiffRow._fields[2:]
#: A store's row as a :class:`DiffRow` (``DiffRow._make`` without its Python-level call).
_named = partial(tuple.__new__, DiffRow)
#: A row's :data:`COLUMNS` (past ``key`` and ``url``).
_COMPARED = slice(2, None)


@dataclass(frozen=True, slots=True)
class Change:
    url: str
    kind: str
    field: str | None
    old: Any
    new: Any
    #: ``new-broken``: the distinct pages linking to it, their links, and the first pages.
    linking_pages: int | None = None
    linking_links: int | None = None
    linked_from: tuple[str, ...] = ()

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
            "linking_pages": self.linking_pages,
            "linking_links": self.linking_links,
            "linked_from": list(self.linked_from) if self.kind == "new-broken" else None,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSet:
    """The changes from one crawl to another, most severe first (:func:`ordered`), with
    what they compare: ``since`` and ``until`` name the crawls (``crawl 1``, ``a.db (crawl
    1)``), ``command`` is the ``sitecrawl diff`` arguments that compare them again."""

    changes: list[Change]
    since: str
    until: str
    command: str
    base_url: str | None = None

    @property
    def described(self) -> str:
        return f"{self.since} -> {self.until}"

    def counts(self) -> dict[str, int]:
        """Changes of each kind found, most severe first."""
        counts = dict.fromkeys(KINDS, 0)
        for change in self.changes:
            counts[change.kind] += 1
        return {kind: n for kind, n in counts.items() if n}


def broken(row: DiffRow) -> bool:
    """A page that answers an error (HTTP 4xx/5xx, or no answer), robots.txt aside."""
    status, error_kind = row.status, row.error_kind
    if error_kind in ("blocked_robots", "robots_unreachable", "redirect_out_of_scope"):
        return False
    return (status is not None and status >= 400) or (status is None and error_kind is not None)


def merge(old: Iterable[tuple[Any, ...]], new: Iterable[tuple[Any, ...]]) -> Iterator[Change]:
    """The changes from crawl ``old`` to crawl ``new``, rows of ``key``, ``url`` and
    :data:`COLUMNS` both sorted by key, in key order (``new-broken`` changes have no
    referrers yet)."""
    olds, news = map(_named, old), map(_named, new)
    a, b = next(olds, None), next(news, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a.key < b.key):
            assert a is not None
            yield Change(a.url, "removed", None, a.status, None)
            a = next(olds, None)
        elif a is None or b.key < a.key:
            if broken(b):
                yield Change(b.url, "new-broken", "status", None, b.status or b.error_kind)
            else:
                yield Change(b.url, "added", None, None, b.status)
            b = next(news, None)
        else:
            if a[_COMPARED] != b[_COMPARED]:  # a page the same both times has no changes
                yield from compare(a, b)
            a, b = next(olds, None), next(news, None)


def compare(a: DiffRow, b: DiffRow) -> Iterator[Change]:
    """The changes of one URL crawled twice."""
    url = b.url
    if broken(b) and not broken(a):
        yield Change(
            url, "new-broken", "status", a.status or a.error_kind, b.status or b.error_kind
        )
    if a.status != b.status:
        yield Change(url, "status", "status", a.status, b.status)
    if b.error_kind == "blocked_robots" and a.error_kind != "blocked_robots":
        yield Change(url, "blocked", "error_kind", a.error_kind, b.error_kind)
        return
    if (a.redirects or b.redirects) and a.final_url != b.final_url:
        yield Change(url, "redirect", "final_url", a.final_url, b.final_url)
        return  # another page answers now: its fields are not this URL's changes
    if a.indexable != b.indexable and a.indexable is not None and b.indexable is not None:
        yield Change(url, "noindex", "indexable", bool(a.indexable), bool(b.indexable))
    if a.canonical != b.canonical:
        yield Change(url, "canonical", "canonical", a.canonical, b.canonical)
    if a.title != b.title:
        yield Change(url, "title", "title", a.title, b.title)
    if a.h1 != b.h1:
        yield Change(url, "h1", "h1", a.h1, b.h1)
    if a.meta_description != b.meta_description:
        yield Change(
            url, "meta-description", "meta_description", a.meta_description, b.meta_description
        )
    words_a, words_b = a.word_count, b.word_count
    if words_a is not None and words_b is not None:
        moved = abs(words_b - words_a)
        if moved >= WORD_MIN and moved > WORD_THRESHOLD * words_a:
            yield Change(url, "word-count", "word_count", words_a, words_b)
    if a.extracted != b.extracted:
        values_a, values_b = _extracted(a.extracted), _extracted(b.extracted)
        for name in sorted(values_a.keys() | values_b.keys()):
            if values_a.get(name) != values_b.get(name):
                yield Change(url, "extracted", f"x:{name}", values_a.get(name), values_b.get(name))
    # Hashes of two lengths come from two versions' algorithms: not comparable.
    hash_a, hash_b = a.body_hash, b.body_hash
    if hash_a is not None and hash_b is not None:
        if hash_a != hash_b and len(hash_a) == len(hash_b):
            yield Change(url, "body", "body_hash", a.body_hash, b.body_hash)
    elif hash_a is None and hash_b is None and (validator := _unread_change(a, b)) is not None:
        yield Change(url, "body", validator, getattr(a, validator), getattr(b, validator))
    # -- markdown (issue 31): the main content, when both crawls made it.
    if a.markdown is not None and b.markdown is not None and a.markdown != b.markdown:
        lines = _first_difference(a.markdown, b.markdown)
        if lines is not None:
            yield Change(url, "content", "markdown", *lines)


def _first_difference(a: bytes | str, b: bytes | str) -> tuple[str, str] | None:
    """The first line that differs between two Markdown texts (as stored, or text), each cut
    to :data:`CONTENT_LINE` characters; None when the texts are the same."""
    old, new = (text if isinstance(text, str) else unpack(text) or "" for text in (a, b))
    if old == new:
        return None
    for line_a, line_b in zip_longest(old.splitlines(), new.splitlines(), fillvalue=""):
        if line_a != line_b:
            return line_a[:CONTENT_LINE], line_b[:CONTENT_LINE]
    return "", ""  # (only line endings differ)


def _unread_change(a: DiffRow, b: DiffRow) -> str | None:
    """For a body neither crawl read (not HTML): the field saying it changed, the first that
    both crawls know of ``etag``, ``last_modified``, ``size_bytes`` (None: unchanged, or
    nothing to tell)."""
    for name in ("etag", "last_modified", "size_bytes"):
        old, new = getattr(a, name), getattr(b, name)
        if old is not None and new is not None:
            return name if old != new else None
    return None


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
