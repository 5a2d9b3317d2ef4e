"""The report's "Custom extraction" tables, from the pages' ``extracted`` values (issue 16):
one row per rule (pages matched, pages empty, distinct values, examples) and one row per page
with each rule's value. None when no page carries a value."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ._table import Table, cell_text

if TYPE_CHECKING:
    from .._models import Page
    from ._table import ColumnType

#: Distinct values shown as examples of a rule.
EXAMPLES = 5


def _empty(value: Any) -> bool:
    return value is None or value is False or value == 0 or value in ("", [], {})


def extraction_tables(pages: Iterable[Page]) -> list[Table]:
    """The two tables, or none when no page has an extracted value."""

    names: dict[str, None] = {}
    rows: list[Page] = []
    for page in pages:
        if page.extracted:
            names.update(dict.fromkeys(page.extracted))
            rows.append(page)
    if not rows:
        return []
    summary = []
    for name in names:
        matched = empty = 0
        distinct: dict[str, None] = {}
        for page in rows:
            if name not in page.extracted:
                continue  # not HTML, or the rule's `when` left it out
            value = page.extracted[name]
            if _empty(value):
                empty += 1
            else:
                matched += 1
                distinct[cell_text(value) or ""] = None
        examples = " · ".join(list(distinct)[:EXAMPLES])
        summary.append([name, matched, empty, len(distinct), examples])
    columns: tuple[tuple[str, ColumnType], ...] = (
        ("Page", "url"),
        *((name, "text") for name in names),
    )
    return [
        Table(
            "extraction",
            "Custom extraction",
            "Each extraction rule (-x): pages where it found a value, pages where it found"
            " none (or false, 0), distinct values and some of them.",
            (
                ("Rule", "text"),
                ("Pages matched", "num"),
                ("Pages empty", "num"),
                ("Distinct values", "num"),
                ("Examples", "text"),
            ),
            summary,
            is_issue=False,
        ),
        Table(
            "extracted",
            "Extracted values",
            "Each page's extracted values (lists and numbers as JSON).",
            columns,
            [[page.url, *(cell_text(page.extracted.get(name)) for name in names)] for page in rows],
            is_issue=False,
        ),
    ]
