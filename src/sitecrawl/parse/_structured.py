"""Structured data of a page: JSON-LD, Microdata and RDFa items. Pure: a parsed tree in, plain
values out (they cross the parser processes' ``marshal`` pipe and are stored as JSON).

Each item is ``{"format": "json-ld" | "microdata" | "rdfa", "type": ..., "properties": ...}``:
``type`` the item's types, space-separated, schema.org ones as their short names
(``https://schema.org/Product`` is ``Product``; None without a type), ``properties`` its
properties, name -> value, or a list of values when a property is given more than once. A
nested item is a dict with ``@type`` (and ``@id``), so Microdata and RDFa items have the same
shape as JSON-LD's. A JSON-LD block that is not valid JSON is an item with ``type`` None,
empty ``properties`` and ``error`` (the JSON parser's message; or that it nests more than
:data:`~._extraction.MAX_JSONLD_DEPTH` levels deep, as the ``jsonld:`` rules skip it).

Read from the same Lexbor tree as the page's other fields (before the word count strips the
scripts): the ``<script>`` elements, then one query for ``itemscope`` and ``typeof``
elements. The page's text was read first (:func:`~._markup.structured_marks`, in C): a page
without a JSON-LD type, an ``itemscope`` or a ``typeof`` skips that look. (extruct
parses each page again with lxml and builds an RDF graph for RDFa: a multiple of the cost,
measured in ``bench/RESULTS.md`` section 26.) RDFa is read as RDFa Lite (``vocab``,
``typeof``, ``property``, ``resource``, ``prefix``), what schema.org markup uses; a
``property`` outside any ``typeof`` (Open Graph's ``og:`` meta tags) is no item.
"""

from __future__ import annotations

import re
from typing import Any

import ada_url
from selectolax.lexbor import LexborHTMLParser, LexborNode

from .._json import loads
from ._extraction import MAX_JSONLD_DEPTH, _nests_within
from ._markup import MARK_ITEMSCOPE, MARK_JSON_LD, MARK_TYPEOF
from ._text import clean

JSON_LD = "json-ld"
MICRODATA = "microdata"
RDFA = "rdfa"

#: The schema.org namespaces a type or property name is shortened from.
_SCHEMA_PREFIXES = ("https://schema.org/", "http://schema.org/", "schema:")
#: Nested items deeper than this are cut (an ``itemref`` loop, or a pathological page).
MAX_DEPTH = 16
#: Items a page may give (one page of thousands of ``itemscope`` rows: the first ones).
MAX_ITEMS = 200

#: Microdata: the element -> the attribute holding its value (else the text).
_MICRODATA_URL = {
    "a": "href",
    "area": "href",
    "link": "href",
    "audio": "src",
    "embed": "src",
    "iframe": "src",
    "img": "src",
    "source": "src",
    "track": "src",
    "video": "src",
    "object": "data",
}
_MICRODATA_VALUE = {"meta": "content", "data": "value", "meter": "value", "time": "datetime"}
#: A JSON-LD block's wrapping that browsers (and Google) accept: an HTML comment, CDATA.
_WRAPPING = re.compile(r"^\s*(?://\s*)?(?:<!--|<!\[CDATA\[)|(?://\s*)?(?:-->|\]\]>)\s*$")


#: The elements to read for the marks a page's text has (one query: one walk of the tree).
_SCOPES = {
    MARK_ITEMSCOPE: ("[itemscope]", (MICRODATA,)),
    MARK_TYPEOF: ("[typeof]", (RDFA,)),
    MARK_ITEMSCOPE | MARK_TYPEOF: ("[itemscope],[typeof]", (MICRODATA, RDFA)),
}


def structured_data(
    tree: LexborHTMLParser, base: str, marks: int = MARK_ITEMSCOPE | MARK_TYPEOF | MARK_JSON_LD
) -> list[dict[str, Any]]:
    """The page's items: JSON-LD blocks first, then Microdata, then RDFa, each in document
    order; URLs of Microdata and RDFa values resolved against ``base``. ``marks``: what
    :func:`~._markup.structured_marks` found in the page's text (a syntax it did not find is
    not looked for)."""
    items = _json_ld(tree) if marks & MARK_JSON_LD else []
    if scope := _SCOPES.get(marks & (MARK_ITEMSCOPE | MARK_TYPEOF)):
        selector, kinds = scope
        if nodes := tree.css(selector):
            for kind in kinds:
                items += _Reader(kind, base).items(nodes, tree)
    return items[:MAX_ITEMS]


def short_type(name: str) -> str:
    """A schema.org name without its namespace (``https://schema.org/Offer`` is ``Offer``)."""
    for prefix in _SCHEMA_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def type_names(value: Any) -> list[str]:
    """A JSON-LD ``@type`` (a string or a list of them) as short names."""
    if isinstance(value, str):
        return [short_type(part) for part in value.split()]
    if isinstance(value, list):
        return [short_type(part) for part in value if isinstance(part, str)]
    return []


# JSON-LD


def _json_ld(tree: LexborHTMLParser) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for node in tree.tags("script"):
        kind = node.attributes.get("type")
        if not kind or not _is_json_ld(kind):
            continue
        text = node.text(deep=True) or ""
        if "<" in text and ("<!--" in text or "<![CDATA[" in text):  # (cheaper than a regex)
            text = _WRAPPING.sub("", text)
        try:
            data = loads(text)  # (orjson when installed: a third of json's time)
        except ValueError as exc:  # (JSONDecodeError)
            if text.strip():  # (an empty block is no item)
                items.append(invalid_item(str(exc)))
            continue
        except RecursionError:
            data = None
        # (Brackets counted first: the walk cost more than the parse, and few blocks have
        # enough brackets to nest that deep.)
        deep = len(text) > MAX_JSONLD_DEPTH and text.count("[") + text.count("{") > MAX_JSONLD_DEPTH
        if data is None or (deep and not _nests_within(data, MAX_JSONLD_DEPTH)):
            # (A value must cross the marshal pipe and fit every output: orjson stops at 255.)
            items.append(invalid_item(f"nested more than {MAX_JSONLD_DEPTH} levels deep"))
            continue
        items += _json_ld_items(data)
    return items


def _is_json_ld(kind: str) -> bool:
    """Whether a ``<script>``'s type is JSON-LD's: ``application/ld+json`` in any case, with
    spaces around it or parameters after it (``; charset=utf-8``)."""
    if kind == "application/ld+json":  # (the usual case first)
        return True
    return kind.split(";", 1)[0].strip().lower() == "application/ld+json"


def invalid_item(message: str) -> dict[str, Any]:
    return {"format": JSON_LD, "type": None, "properties": {}, "error": message}


def _json_ld_items(data: Any, context: Any = None) -> list[dict[str, Any]]:
    """The top-level nodes of a JSON-LD document: the object, each of a list's, each of an
    ``@graph``'s (in the graph's ``@context``). A node's ``@context`` stays in its
    properties unless it is schema.org's (its names are then schema.org's)."""
    if isinstance(data, list):
        return [item for part in data for item in _json_ld_items(part, context)]
    if not isinstance(data, dict):
        return []
    context = data.get("@context", context)
    graph = data.get("@graph")
    if isinstance(graph, list):
        return [item for part in graph for item in _json_ld_items(part, context)]
    properties = data.copy()  # (a copy in C: a comprehension cost more than the JSON parse)
    kind = properties.pop("@type", None)
    if (isinstance(context, str) and context in _SCHEMA_ORG_CONTEXTS) or schema_org_context(
        context
    ):
        properties.pop("@context", None)
    elif context is not None:
        properties.setdefault("@context", context)
    if isinstance(kind, str) and ":" not in kind and " " not in kind:
        name: str | None = kind or None  # the usual case: one short name
    else:
        name = " ".join(type_names(kind)) or None
    return [{"format": JSON_LD, "type": name, "properties": properties}]


#: The usual ``@context`` values, looked up before :func:`schema_org_context` reads one.
_SCHEMA_ORG_CONTEXTS = frozenset(
    f"{scheme}://{host}{slash}"
    for scheme in ("http", "https")
    for host in ("schema.org", "www.schema.org")
    for slash in ("", "/")
)


def schema_org_context(context: Any) -> bool:
    """True for a JSON-LD ``@context`` that makes plain names schema.org's: the schema.org
    URL (http or https, with or without a slash), an object whose ``@vocab`` is it, or a
    list holding one; also no context at all (Google reads such blocks as schema.org)."""
    if context is None:
        return True
    if isinstance(context, str):
        return context.rstrip("/").split("://", 1)[-1] in ("schema.org", "www.schema.org")
    if isinstance(context, dict):
        return schema_org_context(context.get("@vocab", ""))
    if isinstance(context, list):
        return any(schema_org_context(part) for part in context if part is not None)
    return False


# Microdata and RDFa Lite: the same walk, different attributes.


class _Reader:
    def __init__(self, kind: str, base: str) -> None:
        self.kind = kind
        self.base = base
        microdata = kind == MICRODATA
        self.scope = "itemscope" if microdata else "typeof"
        self.prop = "itemprop" if microdata else "property"

    def items(self, nodes: list[LexborNode], tree: LexborHTMLParser) -> list[dict[str, Any]]:
        """The top-level items among ``nodes`` (the elements with this syntax's scope
        attribute, or the other's)."""
        found: list[dict[str, Any]] = []
        for node in nodes:
            attributes = node.attributes
            if self.scope in attributes and self.prop not in attributes:  # a top-level item
                item = self.item(node, tree, 0)
                types = item.pop("@type", None)
                found.append({"format": self.kind, "type": types, "properties": item})
                if len(found) >= MAX_ITEMS:
                    break
        return found

    def item(self, node: LexborNode, tree: LexborHTMLParser, depth: int) -> dict[str, Any]:
        """One item: ``@type`` (space-separated short names, or None), ``@id`` when given,
        and its properties."""
        attributes = node.attributes
        if self.kind == MICRODATA:
            types = attributes.get("itemtype") or ""
            ident = attributes.get("itemid")
        else:
            types = attributes.get("typeof") or ""
            # (On a typeof element, an href or src names the new item, as resource does.)
            ident = attributes.get("resource") or attributes.get("href") or attributes.get("src")
        names = [self.name(node, part) for part in types.split()]
        item: dict[str, Any] = {"@type": " ".join(names) or None}
        if ident:
            item["@id"] = self.url(ident)
        if depth >= MAX_DEPTH:
            return item
        roots = list(node.iter(include_text=False))
        if self.kind == MICRODATA and (refs := attributes.get("itemref")):
            for ref in refs.split():
                if (target := tree.css_first(f'[id="{_css_string(ref)}"]')) is not None:
                    roots.append(target)
        stack = roots[::-1]
        while stack:
            child = stack.pop()
            child_attributes = child.attributes
            scope = self.scope in child_attributes
            if names_value := child_attributes.get(self.prop):
                value = self.item(child, tree, depth + 1) if scope else self.value(child)
                for name in names_value.split():
                    _add(item, self.name(child, name), value)
            if not scope:
                stack += list(child.iter(include_text=False))[::-1]
        return item

    def name(self, node: LexborNode, name: str) -> str:
        """A type or property name, short when it is schema.org's (an RDFa term is read in
        the ``vocab`` of the nearest element that sets one)."""
        if self.kind == RDFA and ":" not in name:
            vocab = _inherited(node, "vocab")
            return short_type(vocab + name) if vocab else name
        return short_type(name)

    def value(self, node: LexborNode) -> str:
        attributes = node.attributes
        tag = node.tag or ""
        if self.kind == RDFA:
            if (content := attributes.get("content")) is not None:
                return content
            for name in ("resource", "href", "src"):
                if (link := attributes.get(name)) is not None:
                    return self.url(link)
            if tag == "time" and (when := attributes.get("datetime")) is not None:
                return when
            return clean(node.text(deep=True) or "")
        if (url_attribute := _MICRODATA_URL.get(tag)) is not None:
            link = attributes.get(url_attribute)
            return self.url(link) if link is not None else ""
        if (value_attribute := _MICRODATA_VALUE.get(tag)) is not None:
            value = attributes.get(value_attribute)
            if value is not None:
                return value
        return clean(node.text(deep=True) or "")

    def url(self, value: str) -> str:
        """A URL value resolved, its fragment kept (``#org`` names an item); as it is when
        it does not resolve."""
        value = value.strip()
        try:
            resolved: str = ada_url.join_url(self.base, value)
        except ValueError:
            return value
        return resolved


def _add(item: dict[str, Any], name: str, value: Any) -> None:
    if name not in item:
        item[name] = value
    elif isinstance(current := item[name], list):
        current.append(value)
    else:
        item[name] = [current, value]


def _inherited(node: LexborNode | None, name: str) -> str | None:
    while node is not None:
        if (value := node.attributes.get(name)) is not None:
            return value.strip()
        node = node.parent
    return None


def _css_string(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')
