"""What each field of the page record is to the rest of the code, said on the field itself.

:class:`~sitecrawl.Page` declares its fields with :func:`record_field`, whose keywords say how
the code around the record treats the field; every field list is derived from them
(:mod:`sitecrawl._models` derives the lists, the modules named here read them):

``parsed``
    the HTML parser fills it (the parser answers with this subset of the record:
    :class:`~sitecrawl.parse.Extracted`);
``diff``
    ``sitecrawl diff`` reads it (:mod:`sitecrawl._diff`'s row columns); a :class:`ChangeKind`
    also names the change it makes, with its severity, its place among the kinds and the
    report's table (:mod:`sitecrawl.report._changes`);
``rendered``
    with ``--render``, the rendered DOM's value is compared with the raw HTML's, and a
    difference is named in ``js_changed`` by this name (``rendered_from``: the parser's value
    compared, when the record keeps something derived from it: ``robots`` <- ``robots_meta``
    for ``indexable``; :mod:`sitecrawl.render._detect`);
``audit_text``
    a text the audit checks for missing and duplicate values, and its label in the report
    (:mod:`sitecrawl.audit._findings`, :mod:`sitecrawl.report._tables`);
``report``
    its column in the report's "All pages" table (:class:`Column`);
``course``
    its heading among the course's first CSV columns (:mod:`sitecrawl.sinks._formats`);
``csv``
    False: CSV files leave it out unless asked for (``markdown``: a page of text a cell, only
    with ``--csv-markdown``; :mod:`sitecrawl.sinks._tables`);
``record``
    False: kept and stored, but not part of the record ``to_dict`` and the sinks give.

So a new field is one declaration here plus its extraction. No I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, TypedDict, Unpack

Severity: TypeAlias = Literal["error", "warning", "info"]
#: The severities, most severe first.
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class ChangeKind:
    """A kind of change between two crawls of a URL: its ``name`` (``title``,
    ``meta-description``), ``severity``, ``rank`` (the kinds are listed by it, most severe
    first), and the report's table of it (``title`` and ``description``). ``by_value``: a
    change whenever the two crawls' values differ; else :func:`sitecrawl._diff.compare` has
    its own rule for it (a threshold, a redirect that ends the comparison, ...)."""

    name: str
    severity: Severity
    rank: int
    title: str
    description: str
    by_value: bool = True


@dataclass(frozen=True, slots=True)
class Column:
    """A field's column in the report's "All pages" table: its heading, its display type
    (:data:`sitecrawl.report._table.ColumnType`) and its place (columns sorted by ``at``)."""

    heading: str
    type: str
    at: int


@dataclass(frozen=True, slots=True)
class FieldInfo:
    """How the code treats one record field (see the module docstring)."""

    parsed: bool = False
    diff: ChangeKind | bool = False
    rendered: str | None = None
    rendered_from: str | None = None
    audit_text: str | None = None
    report: Column | None = None
    course: str | None = None
    csv: bool = True
    record: bool = True


#: The metadata key that holds a field's :class:`FieldInfo`.
INFO = "sitecrawl"
PLAIN = FieldInfo()


class How(TypedDict, total=False):
    """The keywords of :func:`record_field` and :func:`info`: :class:`FieldInfo`'s fields."""

    parsed: bool
    diff: ChangeKind | bool
    rendered: str | None
    rendered_from: str | None
    audit_text: str | None
    report: Column | None
    course: str | None
    csv: bool
    record: bool


def record_field(
    default: Any = None, *, factory: Callable[[], Any] | None = None, **how: Unpack[How]
) -> Any:
    """A :class:`~sitecrawl.Page` field with a default (``factory``: the default's factory,
    for a list or a dict) and its :class:`FieldInfo` (``how``, by keyword)."""
    metadata = info(**how)
    if factory is not None:
        record = how.get("record", True)
        return dataclasses.field(default_factory=factory, repr=record, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def info(**how: Unpack[How]) -> dict[str, FieldInfo]:
    """A field's metadata holding its :class:`FieldInfo`, for a field without a default:
    ``url: str = field(metadata=info(course="page_url"))`` (a type checker knows
    ``dataclasses.field``'s defaults, not :func:`record_field`'s)."""
    return {INFO: FieldInfo(**how)}


def field_info(field: dataclasses.Field[Any]) -> FieldInfo:
    """A field's :class:`FieldInfo` (a field declared without :func:`record_field`: none)."""
    info = field.metadata.get(INFO, PLAIN)
    assert isinstance(info, FieldInfo)
    return info
