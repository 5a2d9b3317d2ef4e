"""A table of the report: its columns, its rows (capped, counted), and the command that lists
every row; the cells a table's rows hold (lists cut to :data:`MAX_LIST` with their real count,
values as text). Pure; every other module of the report builds on it."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from .._json import dumps

ColumnType: TypeAlias = Literal[
    "text", "url", "status", "num", "ms", "bytes", "bool", "urls", "refs", "hops", "thumb"
]

#: Rows a table embeds; the rest are counted and left to ``sitecrawl export``.
MAX_ROWS = 100_000
#: Items a list cell (referrers, URLs) embeds; its count column says how many there are.
MAX_LIST = 20


@dataclass(frozen=True, slots=True)
class Table:
    id: str
    title: str
    help: str
    columns: tuple[tuple[str, ColumnType], ...]
    rows: list[list[Any]]
    is_issue: bool = True
    """Whether a row here is a problem (drawn red in the contents) or just information."""
    total: int | None = None
    """Rows before the cap (None: :attr:`rows` are all of them)."""
    export: str = "pages"
    """The ``sitecrawl export -t`` table holding every row."""
    command: str | None = None
    """The command writing every row, when it is not ``sitecrawl export -t`` :attr:`export`."""
    lists_from: str | None = None
    """The ``sitecrawl export -t`` table holding every item of a list cell cut short
    (None: :attr:`export`), or with :attr:`command` that command."""
    facets: tuple[int, ...] = ()
    """Columns (text) the reader filters by value: a menu each, every value with its count."""

    @property
    def count(self) -> int:
        return len(self.rows) if self.total is None else self.total

    @property
    def more(self) -> int:
        """Rows left out of the file."""
        return self.count - len(self.rows)

    def capped(self, max_rows: int) -> Table:
        if len(self.rows) <= max_rows:
            return self
        return replace(self, rows=self.rows[:max_rows], total=len(self.rows))

    def to_json(self, export_source: str = "STATE.db") -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "columns": [{"label": label, "type": kind} for label, kind in self.columns],
            "rows": self.rows,
            "more": self.export_command(export_source, self.lists_from),
            "facets": list(self.facets),
        }

    def export_command(self, export_source: str, table: str | None = None) -> str:
        """The command writing every row (or every item of ``table``)."""
        if self.command is not None:
            return self.command
        table = table or self.export
        return f"sitecrawl export {export_source} -t {table} -o {table}.csv"


def cell_list(items: list[Any], total: int) -> list[Any] | dict[str, Any]:
    """A list cell: the items themselves, or when there are more than :data:`MAX_LIST`
    (``total`` in all), the first ones and the real count."""
    if total <= MAX_LIST and len(items) <= MAX_LIST:
        return items
    return {"items": items[:MAX_LIST], "total": max(total, len(items))}


def cell_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else dumps(value)
