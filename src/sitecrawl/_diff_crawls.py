"""What changed between two crawls kept in state files: :func:`compare` merges their pages
(:mod:`sitecrawl._diff`, pure) and adds to each new broken link the pages linking there;
:func:`between` and :func:`previous_changes` name the crawls of one file. For every caller:
``sitecrawl diff``, ``crawl --diff``, the report's changes, the server's monitors and the MCP
``diff`` tool."""

from __future__ import annotations

import shlex
from contextlib import closing
from dataclasses import replace
from typing import TYPE_CHECKING

from ._diff import COLUMNS, ChangeSet, merge, ordered

if TYPE_CHECKING:
    from ._diff import Change
    from .frontier import SqliteFrontier


def between(store: SqliteFrontier, path: str, old: int, new: int) -> ChangeSet:
    """The changes from crawl ``old`` to crawl ``new`` of the state file ``path``, open (a
    crawl not finished says so: the pages it has not reached yet count as removed)."""
    status = {crawl["id"]: crawl["status"] for crawl in store.crawls()}
    return ChangeSet(
        changes=compare(store, old, store, new),
        since=f"crawl {old}" + ("" if status[old] == "finished" else f" ({status[old]})"),
        until=f"crawl {new}" + ("" if status[new] == "finished" else f" ({status[new]})"),
        command=f"{shlex.quote(path)} --from {old} --to {new}",
        base_url=store.base_url,
    )


def previous_changes(store: SqliteFrontier, path: str) -> ChangeSet | None:
    """The changes of the current crawl of state file ``path`` since the crawl before it,
    or None when the file keeps no earlier crawl."""
    earlier = [crawl["id"] for crawl in store.crawls() if crawl["id"] < store.crawl]
    return between(store, path, earlier[-1], store.crawl) if earlier else None


def compare(
    old: SqliteFrontier, old_crawl: int, new: SqliteFrontier, new_crawl: int
) -> list[Change]:
    """The changes from one crawl to another, most severe first; new broken links with the
    pages of the newer crawl linking to them."""
    # Both sides closed before their files are, also when one fails (a corrupt file)
    with (
        closing(old.diff_rows(old_crawl, COLUMNS)) as olds,
        closing(new.diff_rows(new_crawl, COLUMNS)) as news,
    ):
        changes = list(merge(olds, news))
    broken = [change.url for change in changes if change.kind == "new-broken"]
    if broken:
        linking = new.referrers(new_crawl, broken)

        def with_referrers(change: Change) -> Change:
            first, pages, links = linking.get(change.url, ([], 0, 0))
            return replace(
                change, linking_pages=pages, linking_links=links, linked_from=tuple(first)
            )

        changes = [with_referrers(c) if c.kind == "new-broken" else c for c in changes]
    return ordered(changes)
