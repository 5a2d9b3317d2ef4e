"""Near-duplicate content over a finished crawl's pages: exact duplicates by the content's hash,
near duplicates by MinHash and LSH (locality-sensitive hashing) over the signatures the parser
kept (``--near-duplicates``: :attr:`~sitecrawl.Page.content_hash`, ``content_minhash``; see
:mod:`sitecrawl.parse._signature`). Pure, no I/O; run after the crawl, from the store.

The pages compared are the successful HTML documents that are indexable and canonical to
themselves (what a search engine would index; a page canonicalised elsewhere is meant to be a
copy). Pages with one content hash are one exact group: one of them stands for the group in
the LSH. The signature's :data:`~sitecrawl.parse._signature.NPERM` minima are cut into
``bands`` of ``rows`` (:func:`lsh_shape`): two pages whose minima agree on a whole band are
candidates, and a candidate whose estimated similarity (the share of equal minima) reaches the
threshold is a near duplicate. A cluster is a connected group of such pairs (with their exact
groups). Memory: the signatures (512 bytes a page) and one band's dict at a time; a bucket
keeps at most :data:`BUCKET_KEPT` pages to compare a newcomer with (a template shared by
thousands of pages costs no quadratic time).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from .._models import Page
from ..parse import NPERM, similarity
from ._checks import Finding
from ._findings import page_key
from ._hreflang import canonical_elsewhere, own_url
from ._rows import is_html, succeeded

#: The similarity from which two pages are near duplicates unless told otherwise.
DEFAULT_NEAR_DUP_THRESHOLD = 0.9
#: The pages of a bucket a newcomer is compared with, at most.
BUCKET_KEPT = 4
#: The chance a pair at the threshold must have to become a candidate (:func:`lsh_shape`).
RECALL_AT_THRESHOLD = 0.995
#: How many other pages of its cluster a finding's detail names.
OTHERS_KEPT = 10


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """One page of a cluster: ``similar_to`` is the page it is most similar to (an exact
    duplicate when it has one: ``similarity`` 1.0, ``exact`` True), ``cluster`` the cluster's
    number (1, 2, ... in the order of their first URL), ``size`` its pages."""

    url: str
    cluster: int
    similar_to: str
    similarity: float
    exact: bool
    size: int

    def to_dict(self) -> dict[str, object]:
        """A row of the ``near_duplicates`` table."""
        return {
            "url": self.url,
            "cluster_id": self.cluster,
            "similar_to": self.similar_to,
            "similarity": self.similarity,
        }


def lsh_shape(threshold: float, nperm: int = NPERM) -> tuple[int, int]:
    """``(bands, rows)``: the most rows a band (the fewest chance candidates) such that a
    pair of similarity ``threshold`` is a candidate with :data:`RECALL_AT_THRESHOLD`,
    ``1 - (1 - t**rows)**bands``."""
    for rows in range(nperm, 0, -1):
        bands = nperm // rows
        if 1 - (1 - threshold**rows) ** bands >= RECALL_AT_THRESHOLD:
            return bands, rows
    return nperm, 1


class Signatures:
    """The pages compared, gathered one page at a time (a store's pages, streamed):
    :meth:`add` each page, then :meth:`rows`. Of a page not compared it keeps only the key
    of one that did not redirect (whether a redirect ended on a page crawled in its own
    right: that page speaks for it, as :func:`~sitecrawl.audit._hreflang.documents` says)."""

    def __init__(self) -> None:
        self._direct: set[str] = set()
        self._kept: list[tuple[bool, str, str, bytes]] = []

    def add(self, page: Page) -> None:
        if not page.redirects:
            self._direct.add(page_key(page.url))
        if page.content_hash is None or page.content_minhash is None:
            return
        if not (succeeded(page) and is_html(page)) or page.indexable is False:
            return
        if canonical_elsewhere(page) is None:
            redirected = bool(page.redirects)
            self._kept.append((redirected, own_url(page), page.content_hash, page.content_minhash))

    def rows(self) -> list[tuple[str, str, bytes]]:
        """``(url, content_hash, content_minhash)`` of each page compared."""
        return [
            (url, content_hash, minhash)
            for redirected, url, content_hash, minhash in self._kept
            if not redirected or page_key(url) not in self._direct
        ]


def signed_pages(pages: Iterable[Page]) -> list[tuple[str, str, bytes]]:
    """``(url, content_hash, content_minhash)`` of the pages compared (see the module
    docstring): signed, successful, indexable HTML documents canonical to themselves."""
    found = Signatures()
    for page in pages:
        found.add(page)
    return found.rows()


def near_duplicates(
    signed: Iterable[tuple[str, str, bytes]], threshold: float = DEFAULT_NEAR_DUP_THRESHOLD
) -> list[NearDuplicate]:
    """Every page with an exact or near duplicate, by cluster then URL; ``signed`` as
    :func:`signed_pages` gives it."""
    urls: list[str] = []
    group_of: list[int] = []  # page -> its exact group
    groups: list[list[int]] = []  # exact group -> its pages
    sigs: list[bytes] = []  # exact group -> its signature (its first page's)
    by_hash: dict[str, int] = {}
    for url, content_hash, minhash in signed:
        group = by_hash.setdefault(content_hash, len(groups))
        if group == len(groups):
            groups.append([])
            sigs.append(minhash)
        groups[group].append(len(urls))
        group_of.append(group)
        urls.append(url)
    parent = list(range(len(groups)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    best: dict[int, tuple[float, int]] = {}  # group -> (similarity, most similar group)
    bands, rows = lsh_shape(threshold)
    width = 4 * rows
    for band in range(bands):
        start = band * width
        buckets: dict[int, int | list[int]] = {}  # one band at a time
        for i, sig in enumerate(sigs):
            key = hash(sig[start : start + width])
            kept = buckets.setdefault(key, i)
            if kept == i:
                continue
            others = kept if isinstance(kept, list) else [kept]
            matched = False
            for other in others:
                score = similarity(sig, sigs[other])
                if score >= threshold:
                    matched = True
                    parent[find(i)] = find(other)
                    for a, b in ((i, other), (other, i)):
                        if score > best.get(a, (-1.0, 0))[0]:
                            best[a] = (score, b)
            if not matched and len(others) < BUCKET_KEPT:
                buckets[key] = [*others, i]
    members: dict[int, list[int]] = {}
    for group, pages in enumerate(groups):
        members.setdefault(find(group), []).extend(pages)
    clusters = sorted(
        (sorted(pages, key=urls.__getitem__) for pages in members.values() if len(pages) > 1),
        key=lambda pages: urls[pages[0]],
    )
    found: list[NearDuplicate] = []
    for number, pages in enumerate(clusters, 1):
        for page in pages:
            group = group_of[page]
            twins = [other for other in groups[group] if other != page]
            if twins:
                twin = urls[min(twins, key=urls.__getitem__)]
                found.append(NearDuplicate(urls[page], number, twin, 1.0, True, len(pages)))
            else:
                score, other = best[group]
                similar = urls[groups[other][0]]
                found.append(NearDuplicate(urls[page], number, similar, score, False, len(pages)))
    return found


def near_duplicate_findings(found: Sequence[NearDuplicate]) -> Iterator[Finding]:
    """The issues rows of :func:`near_duplicates`: ``exact_duplicate`` for a page whose
    content another page has word for word, ``near_duplicate`` for one only near another."""
    by_cluster: dict[int, list[str]] = {}
    for row in found:
        by_cluster.setdefault(row.cluster, []).append(row.url)
    for row in found:
        others = [url for url in by_cluster[row.cluster] if url != row.url][:OTHERS_KEPT]
        detail = {
            "cluster": row.cluster,
            "similar_to": row.similar_to,
            "similarity": row.similarity,
            "pages": row.size,
            "others": others,
        }
        if row.exact:
            yield (
                "exact_duplicate",
                row.url,
                f"the same content as {row.similar_to} (cluster {row.cluster}, {row.size} pages)",
                detail,
            )
        else:
            yield (
                "near_duplicate",
                row.url,
                f"{row.similarity:.0%} similar to {row.similar_to}"
                f" (cluster {row.cluster}, {row.size} pages)",
                detail,
            )
