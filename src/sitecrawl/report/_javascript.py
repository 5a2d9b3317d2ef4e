"""The report's rendering tables (``--render``): "Changed by JavaScript" (issue 18), the
rendered pages whose title, canonical, robots directives or links differ between the raw
HTML and the rendered DOM; and "Render cut off or blocked" (issue 30), the pages whose render
was cut off at the render timeout (maybe partial) or had requests robots.txt blocked. Each
only when it has a row."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._table import Table

if TYPE_CHECKING:
    from .._models import Page

#: The changes the table shows (``h1`` and ``meta_description`` changes are in the records).
SHOWN = frozenset({"title", "canonical", "robots", "links"})


def javascript_tables(pages: Sequence[Page]) -> list[Table]:
    """The tables that have rows."""
    rows: list[list[object]] = []
    for page in pages:
        changed = [name for name in page.js_changed if name in SHOWN]
        if not page.rendered or not changed:
            continue
        before = page.html_values
        rows.append(
            [
                page.url,
                ", ".join(changed),
                before.get("title", page.title),
                page.title,
                before.get("canonical", page.canonical),
                page.canonical,
                before.get("robots"),
                page.indexable,
                page.js_links_added or 0,
                len(before.get("links") or ()),
            ]
        )
    return [*_changed_table(rows), *_cut_table(pages)]


def _changed_table(rows: list[list[object]]) -> list[Table]:

    if not rows:
        return []
    return [
        Table(
            "javascript",
            "Changed by JavaScript",
            "Rendered pages (--render) whose title, canonical, robots directives or links"
            " differ between the HTML the server sent and the DOM after JavaScript ran.",
            (
                ("Page", "url"),
                ("Changed", "text"),
                ("Title in HTML", "text"),
                ("Title rendered", "text"),
                ("Canonical in HTML", "url"),
                ("Canonical rendered", "url"),
                ("Robots in HTML (changed)", "text"),
                ("Indexable rendered", "bool"),
                ("Links added", "num"),
                ("Links removed", "num"),
            ),
            rows,
            is_issue=False,
        )
    ]


def _cut_table(pages: Sequence[Page]) -> list[Table]:

    rows: list[list[object]] = [
        [
            page.url,
            page.render_complete is False,
            len(page.blocked_resources),
            page.blocked_resources[0] if page.blocked_resources else None,
        ]
        for page in pages
        if page.render_complete is False or page.blocked_resources
    ]
    if not rows:
        return []
    return [
        Table(
            "render-cut",
            "Render cut off or blocked",
            "Pages whose render was cut off at --render-timeout before the network went idle"
            " (their fields may be partial), or whose requests robots.txt blocked while"
            " rendering (blocked_resources in the records).",
            (
                ("Page", "url"),
                ("Cut off", "bool"),
                ("Blocked requests", "num"),
                ("First blocked", "url"),
            ),
            rows,
            is_issue=True,
        )
    ]
