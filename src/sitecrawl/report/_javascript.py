"""The report's "Changed by JavaScript" table (issue 18): the rendered pages (``--render``)
whose title, canonical, robots directives or links differ between the raw HTML and the
rendered DOM. None when no page was rendered with such a change."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._models import Page
    from ._tables import Table

#: The changes the table shows (``h1`` and ``meta_description`` changes are in the records).
SHOWN = frozenset({"title", "canonical", "robots", "links"})


def javascript_tables(pages: Iterable[Page]) -> list[Table]:
    """The table, or none when no rendered page changed what it shows."""
    from ._tables import Table

    rows = []
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
