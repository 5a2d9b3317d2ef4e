"""The page codec: a :class:`~sitecrawl.Page` <-> a stored record of named columns. No I/O.

Every page store writes and reads pages through here (the SQLite ``pages`` table, the Redis
``pages`` list of JSON records), so a field added to :class:`~sitecrawl.Page` is stored,
read back and exported by every backend without another edit. The columns are the page's
fields, in their order, with two exceptions:

- ``links`` is stored (every link with its text, rel and kind) though it is not part of the
  record :meth:`~sitecrawl.Page.to_dict` gives;
- ``outgoing_links`` is not: it is derived from ``links`` on reading (:func:`outgoing_links`).

How a column is stored follows the field's type: a list is a JSON array (JSON text in SQLite,
an array in a JSON record), its tuples arrays; a dict a JSON object; a bool is stored as it
is (SQLite makes it 0/1); everything else as it is. The long text columns (:data:`COMPRESSED`:
``markdown``) are zstd frames (level 1): a BLOB in SQLite, base64 text in a JSON record. On
reading, a missing or NULL column gives the field's default, so records written before a
field existed read back with it empty.
"""

from __future__ import annotations

import base64
import dataclasses
import operator
import sys
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._json import dumps, loads
from ._models import Link, Page

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

_DERIVED = "outgoing_links"


def outgoing_links(links: Iterable[Link]) -> list[str]:
    """A page's ``outgoing_links`` from its links: the distinct targets of its ``a`` links,
    in order (as the parser makes them)."""
    return list(dict.fromkeys(link[0] for link in links if link[3] == "a"))


def _column_type(hint: Any) -> str:
    if typing.get_origin(hint) is dict:
        return "object"
    if typing.get_origin(hint) is list:
        (item,) = typing.get_args(hint)
        return "tuples" if typing.get_origin(item) is tuple else "list"
    types = set(typing.get_args(hint) or (hint,)) - {type(None)}
    (single,) = types
    return {bool: "bool", int: "int", float: "float", bytes: "bytes"}.get(single, "str")


_HINTS = typing.get_type_hints(Page)
#: Column name -> how it is stored: ``list`` / ``tuples`` (a JSON array; of arrays read back as
#: tuples), ``object`` (a JSON object), ``bool``, ``int``, ``float`` or ``str``, from the
#: field's type (``bytes``: a BLOB in SQLite, base64 text in a JSON record). In :class:`Page`
#: field order.
COLUMN_TYPES: dict[str, str] = {
    f.name: _column_type(_HINTS[f.name]) for f in dataclasses.fields(Page) if f.name != _DERIVED
}
#: The element types of each ``tuples`` column's tuples: ``redirects`` -> ``(str, int)``.
TUPLE_TYPES: dict[str, tuple[Any, ...]] = {
    name: typing.get_args(typing.get_args(_HINTS[name])[0])
    for name, kind in COLUMN_TYPES.items()
    if kind == "tuples"
}
#: The columns whose field may be None.
OPTIONAL: frozenset[str] = frozenset(
    name for name in COLUMN_TYPES if type(None) in typing.get_args(_HINTS[name])
)
#: The stored columns, in :class:`Page` field order.
COLUMNS: tuple[str, ...] = tuple(COLUMN_TYPES)
#: The columns of bytes (``content_minhash``).
BYTES_COLUMNS: frozenset[str] = frozenset(
    name for name, kind in COLUMN_TYPES.items() if kind == "bytes"
)
#: The columns stored as JSON arrays.
JSON_COLUMNS: frozenset[str] = frozenset(
    name for name, kind in COLUMN_TYPES.items() if kind in ("list", "tuples", "object")
)
#: The text columns stored compressed (zstd, level 1: a page's Markdown compresses ~3x, at
#: ~0.5 ms for 20 KB; level 3 saved 2 % more for 60 % more time; zlib 6 was 4x slower, zlib 1
#: 7 % bigger). zstd, not zlib: it is a dependency already (``backports.zstd``: aiohttp's zstd
#: bodies) and the standard library's from Python 3.14.
COMPRESSED: frozenset[str] = frozenset({"markdown"})
_LEVEL = 1


def pack(text: str | None) -> bytes | None:
    """A compressed column's value as stored in SQLite: a zstd frame of its UTF-8."""
    return None if text is None else zstd.compress(text.encode("utf-8", "surrogatepass"), _LEVEL)


def unpack(stored: bytes | str | None) -> str | None:
    """A compressed column's text, from a zstd frame (SQLite) or its base64 (a JSON record)."""
    if stored is None:
        return None
    frame = base64.b64decode(stored) if isinstance(stored, str) else stored
    return zstd.decompress(frame).decode("utf-8", "surrogatepass")


_FACTORIES: dict[str, Callable[[], Any]] = {
    f.name: f.default_factory
    for f in dataclasses.fields(Page)
    if f.name in COLUMN_TYPES and f.default_factory is not dataclasses.MISSING
}


def encode(page: Page) -> dict[str, Any]:
    """The page as a JSON-able record: column -> value (lists shared, not copied; compressed
    and bytes columns as base64 text)."""
    record = {name: getattr(page, name) for name in COLUMNS}
    for name in BYTES_COLUMNS:
        if (raw := record[name]) is not None:
            record[name] = base64.b64encode(raw).decode("ascii")
    for name in COMPRESSED:
        if (frame := pack(record[name])) is not None:
            record[name] = base64.b64encode(frame).decode("ascii")
    return record


def row(page: Page, columns: Iterable[str]) -> tuple[Any, ...]:
    """The values of ``columns`` for an SQL row: JSON columns as JSON text, compressed
    columns as zstd frames."""
    return tuple(
        dumps(getattr(page, name))
        if name in JSON_COLUMNS
        else pack(getattr(page, name))
        if name in COMPRESSED
        else getattr(page, name)
        for name in columns
    )


def row_encoder(columns: tuple[str, ...]) -> Callable[[Page], list[Any]]:
    """:func:`row` for fixed ``columns``, made once: the values read in one ``attrgetter``
    call, then the JSON columns encoded (a page store writes a row per page)."""
    if len(columns) < 2:
        return lambda page: list(row(page, columns))
    values = operator.attrgetter(*columns)
    as_json = [i for i, name in enumerate(columns) if name in JSON_COLUMNS]
    packed = [i for i, name in enumerate(columns) if name in COMPRESSED]

    def encode_row(page: Page) -> list[Any]:
        out = list(values(page))
        for i in as_json:
            out[i] = dumps(out[i])
        for i in packed:
            out[i] = pack(out[i])
        return out

    return encode_row


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
        if name in COMPRESSED:
            values[name] = unpack(value)
        elif kind == "bytes":
            values[name] = base64.b64decode(value) if isinstance(value, str) else bytes(value)
        elif kind == "bool":
            values[name] = bool(value)
        elif kind == "object":
            values[name] = loads(value) if isinstance(value, str | bytes) else dict(value)
        elif kind in ("list", "tuples"):
            items = loads(value) if isinstance(value, str | bytes) else value
            values[name] = [tuple(item) for item in items] if kind == "tuples" else list(items)
        else:
            values[name] = value
    links: list[Any] = values["links"]
    if links and len(links[0]) == 3:  # a state file of schema 1: every link was an <a>
        values["links"] = links = [(*link, "a") for link in links]
    return Page(**values, outgoing_links=outgoing_links(links))


_SCALARS: dict[str, Callable[[Any], Any]] = {"int": int, "float": float, "str": str}


def from_mapping(row: Mapping[str, Any]) -> Page:
    """A page from any mapping of its fields (a record from :meth:`Page.to_dict`, a JSON Lines
    export, a CSV row, a test's literal), by field name, unknown keys ignored: numbers may be
    text, empty text is None for a number, lists may be JSON text or joined by spaces or
    ``;`` (as CSV cells are), and ``outgoing_links`` is taken as given when there are no
    ``links``."""
    values: dict[str, Any] = {}
    for name, kind in COLUMN_TYPES.items():
        value = row.get(name)
        if value is None or (value == "" and kind in ("int", "float", "bool")):
            continue
        if name in COMPRESSED:  # (text as it is: set after decode, which unpacks)
            continue
        if kind == "object" and isinstance(value, str):
            value = loads(value) if value.startswith("{") else {}
        elif kind in ("list", "tuples") and isinstance(value, str):
            value = loads(value) if value.startswith("[") else value.replace(";", " ").split()
        elif kind in _SCALARS:
            value = _SCALARS[kind](value)
        values[name] = value
    page = decode(values)
    for name in COMPRESSED:
        if isinstance(text := row.get(name), str) and text:
            setattr(page, name, text)
    if not page.links and row.get(_DERIVED):
        given = row[_DERIVED]
        if isinstance(given, str):
            given = loads(given) if given.startswith("[") else given.replace(";", " ").split()
        page.outgoing_links = [str(url) for url in given]
    return page
