"""The page codec: a :class:`~sitecrawl.Page` <-> a stored record of named columns. No I/O.

Every page store writes and reads pages through here (the SQLite ``pages`` table, the Redis
``pages`` list of JSON records), so a field added to :class:`~sitecrawl.Page` is stored,
read back and exported by every backend without another edit. The columns are the page's
fields, in their order, with two exceptions:

- ``links`` is stored (every link with its text, rel and kind) though it is not part of the
  record :meth:`~sitecrawl.Page.to_dict` gives;
- ``outgoing_links`` is not: it is derived from ``links`` on reading (:func:`outgoing_links`).

How a column is stored follows the field's type: a list is a JSON array (JSON text in SQLite,
an array in a JSON record), its tuples arrays; a bool is stored as it is (SQLite makes it
0/1); everything else as it is. On reading, a missing or NULL column gives the field's
default, so records written before a field existed read back with it empty.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._json import dumps, loads
from ._models import Link, Page

_DERIVED = "outgoing_links"


def outgoing_links(links: Iterable[Link]) -> list[str]:
    """A page's ``outgoing_links`` from its links: the distinct targets of its ``a`` links,
    in order (as the parser makes them)."""
    return list(dict.fromkeys(link[0] for link in links if link[3] == "a"))


def _column_types() -> dict[str, str]:
    hints = typing.get_type_hints(Page)
    types: dict[str, str] = {}
    for f in dataclasses.fields(Page):
        if f.name == _DERIVED:
            continue
        hint = hints[f.name]
        if typing.get_origin(hint) is list:
            (item,) = typing.get_args(hint)
            types[f.name] = "tuples" if typing.get_origin(item) is tuple else "list"
        elif bool in (hint, *typing.get_args(hint)):
            types[f.name] = "bool"
        else:
            types[f.name] = "scalar"
    return types


#: Column name -> how it is stored: ``list`` / ``tuples`` (a JSON array; of arrays read back as
#: tuples), ``bool`` or ``scalar``. In :class:`Page` field order.
COLUMN_TYPES: dict[str, str] = _column_types()
#: The stored columns, in :class:`Page` field order.
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
#: The columns stored as JSON arrays.
JSON_COLUMNS: frozenset[str] = frozenset(
    name for name, kind in COLUMN_TYPES.items() if kind in ("list", "tuples")
)
_FACTORIES: dict[str, Callable[[], Any]] = {
    f.name: f.default_factory
    for f in dataclasses.fields(Page)
    if f.name in COLUMN_TYPES and f.default_factory is not dataclasses.MISSING
}


def encode(page: Page) -> dict[str, Any]:
    """The page as a JSON-able record: column -> value (lists shared, not copied)."""
    return {name: getattr(page, name) for name in COLUMNS}


def row(page: Page, columns: Iterable[str]) -> tuple[Any, ...]:
    """The values of ``columns`` for an SQL row: JSON columns as JSON text."""
    return tuple(
        dumps(getattr(page, name)) if name in JSON_COLUMNS else getattr(page, name)
        for name in columns
    )


def decode(record: Mapping[str, Any]) -> Page:
    """A page from a record (:func:`encode`'s, or an SQL row by column name): JSON columns may
    be JSON text or arrays; a missing or NULL column gives the field's default."""
    values: dict[str, Any] = {}
    for name, kind in COLUMN_TYPES.items():
        value = record.get(name)
        if value is None:
            if name in _FACTORIES:
                values[name] = _FACTORIES[name]()
            continue  # the field's default
        if kind == "scalar":
            values[name] = value
        elif kind == "bool":
            values[name] = bool(value)
        else:
            items = loads(value) if isinstance(value, str | bytes) else value
            values[name] = [tuple(item) for item in items] if kind == "tuples" else list(items)
    links: list[Any] = values["links"]
    if links and len(links[0]) == 3:  # a state file of schema 1: every link was an <a>
        values["links"] = links = [(*link, "a") for link in links]
    return Page(**values, outgoing_links=outgoing_links(links))
