"""Custom extraction: named rules (``NAME=SPEC``) evaluated on a parsed page. Pure: no I/O.

A spec is ``[PREFIX:]KIND:EXPR``:

- ``css:SELECTOR`` the text of the first match (as a browser shows it, whitespace collapsed);
  ``css:SELECTOR@ATTR`` an attribute of the first match (stripped);
- ``xpath:EXPR`` the string value of the first result, whitespace collapsed (a number or a
  boolean as it is); needs lxml (the ``xpath`` extra), and the page is parsed by lxml only
  when an XPath rule exists;
- ``regex:PATTERN`` on the decoded HTML: group 1 when the pattern has a group, else the match;
- ``jsonld:PATH`` a JMESPath over the list of the page's JSON-LD objects (every
  ``<script type="application/ld+json">``, lists spread, ``@graph`` flattened), as it gives.

Prefixes: ``all:`` every match (a list), ``count:`` how many (an int), ``exists:`` whether
any (a bool). Without one, a rule that matches nothing gives None.

A rule may also have a ``type`` (``str``, ``int``, ``float``, ``bool``, ``date``; a date is
kept as ISO ``YYYY-MM-DD`` text) and ``when`` (a URL regex: other pages get no value). A value
that cannot be converted is None, and the rule is named in :attr:`Values.unconverted`.
"""

from __future__ import annotations

import datetime
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from selectolax.lexbor import LexborHTMLParser

from .._exceptions import ConfigError
from ._text import inner_texts

if TYPE_CHECKING:
    from selectolax.lexbor import LexborNode

KINDS = ("css", "xpath", "regex", "jsonld")
MODES = ("all", "count", "exists")
TYPES = ("str", "int", "float", "bool", "date")
_NAME = re.compile(r"[A-Za-z_][\w.-]*\Z")
_ATTR = re.compile(r"(.*?)@([A-Za-z_:][-\w:.]*)\Z", re.S)
_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off", ""})


def _clean(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class Rule:
    """One named rule, checked when made: a bad spec is a :class:`ConfigError` naming it."""

    name: str
    spec: str
    type: str | None = None
    when: str | None = None
    kind: str = field(init=False)
    mode: str = field(init=False)
    expr: str = field(init=False)
    attr: str | None = field(init=False)
    compiled: Any = field(init=False, repr=False, compare=False)
    when_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        def bad(why: str) -> ConfigError:
            return ConfigError(f"extract rule {self.name!r} ({self.spec}): {why}")

        if not _NAME.match(self.name):
            raise ConfigError(f"extract rule name {self.name!r}: letters, digits, _ . - only")
        mode, rest = "first", self.spec
        head, sep, tail = rest.partition(":")
        if sep and head in MODES:
            mode, rest = head, tail
        kind, sep, expr = rest.partition(":")
        if not sep or kind not in KINDS:
            raise bad(f"unknown kind {kind!r}: use css:, xpath:, regex: or jsonld:")
        if not expr.strip():
            raise bad("empty expression")
        if self.type is not None and self.type not in TYPES:
            raise bad(f"unknown type {self.type!r}: use {', '.join(TYPES)}")
        attr = None
        if kind == "css" and (found := _ATTR.match(expr)) and "]" not in found.group(2):
            expr, attr = found.group(1), found.group(2)
        set_ = object.__setattr__
        set_(self, "kind", kind)
        set_(self, "mode", mode)
        set_(self, "expr", expr)
        set_(self, "attr", attr)
        try:
            set_(self, "compiled", _compile(kind, expr))
        except Exception as exc:  # each library's own error: one line naming the rule
            raise bad(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
        try:
            set_(self, "when_re", re.compile(self.when) if self.when else None)
        except re.error as exc:
            raise bad(f"bad 'when' regex: {exc}") from None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "spec": self.spec, "type": self.type, "when": self.when}


def _compile(kind: str, expr: str) -> Any:
    if kind == "css":
        LexborHTMLParser("<p></p>").css(expr)  # raises on a bad selector
        return expr
    if kind == "regex":
        return re.compile(expr)
    if kind == "jsonld":
        import jmespath

        return jmespath.compile(expr)
    try:
        from lxml import etree
    except ImportError:
        raise ConfigError("xpath: rules need lxml: pip install 'sitecrawl[xpath]'") from None
    compiled = etree.XPath(expr)
    compiled(etree.fromstring("<html><body><p>x</p></body></html>"))  # unknown functions
    return compiled


@dataclass(slots=True)
class Values:
    """A page's values, rule name -> value, and the rules whose value could not be converted
    to their type."""

    values: dict[str, Any] = field(default_factory=dict)
    unconverted: list[str] = field(default_factory=list)


class Extraction:
    """A set of rules, in order; :meth:`run` evaluates them on one page."""

    def __init__(self, rules: Iterable[Rule] = ()) -> None:
        self.rules = tuple(rules)
        names = [rule.name for rule in self.rules]
        if dup := sorted({name for name in names if names.count(name) > 1}):
            raise ConfigError(f"extract rule {dup[0]!r} is given twice")
        self.needs_lxml = any(rule.kind == "xpath" for rule in self.rules)
        self.needs_jsonld = any(rule.kind == "jsonld" for rule in self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    @classmethod
    def from_specs(cls, specs: Mapping[str, str | Mapping[str, Any]]) -> Extraction:
        """From ``{name: spec}`` or ``{name: {"spec": ..., "type": ..., "when": ...}}``."""
        rules = []
        for name, given in specs.items():
            if isinstance(given, str):
                rules.append(Rule(name, given))
                continue
            unknown = set(given) - {"spec", "type", "when"}
            if unknown or not isinstance(given.get("spec"), str):
                raise ConfigError(f"extract rule {name!r}: needs spec = '...' (type, when)")
            rules.append(Rule(name, given["spec"], given.get("type"), given.get("when")))
        return cls(rules)

    def to_json(self) -> str:
        """The rules as JSON text (for parser processes and a crawl's stored options)."""
        return json.dumps([rule.to_json() for rule in self.rules])

    @classmethod
    def from_json(cls, text: str) -> Extraction:
        return cls(Rule(**item) for item in json.loads(text))

    def run(self, tree: LexborHTMLParser, html: str, url: str) -> Values:
        """Every rule's value on one page: ``tree`` is its Lexbor parse (scripts still in),
        ``html`` its decoded text."""
        found = Values()
        rules = [rule for rule in self.rules if rule.when_re is None or rule.when_re.search(url)]
        lxml_root = _lxml_root(html) if any(rule.kind == "xpath" for rule in rules) else None
        objects = jsonld_objects(tree) if any(rule.kind == "jsonld" for rule in rules) else []
        for rule in rules:
            if rule.kind == "css":
                matches = _css(tree, rule)
            elif rule.kind == "regex":
                matches = _regex(html, rule)
            elif rule.kind == "xpath":
                matches = _xpath(lxml_root, rule)
            else:
                matches = _jsonld(objects, rule)
            if rule.mode == "count":
                value: Any = len(matches)
            elif rule.mode == "exists":
                value = bool(matches)
            elif rule.mode == "all":
                value = [_convert(item, rule, found) for item in matches]
            elif rule.kind == "jsonld":
                value = _convert(_jsonld_value(objects, rule), rule, found)
            else:
                value = _convert(matches[0], rule, found) if matches else None
            found.values[rule.name] = value
        return found


def _css(tree: LexborHTMLParser, rule: Rule) -> list[Any]:
    if rule.mode == "first" and rule.attr is None:
        node = tree.css_first(rule.expr)
        return [] if node is None else inner_texts([node])
    nodes: list[LexborNode] = tree.css(rule.expr)
    if rule.mode == "first":
        nodes = nodes[:1]
    if rule.attr is None:
        return inner_texts(nodes) if rule.mode == "all" else nodes
    values = (node.attributes.get(rule.attr) for node in nodes)
    return [value.strip() for value in values if value is not None]


def _regex(html: str, rule: Rule) -> list[Any]:
    pattern: re.Pattern[str] = rule.compiled
    group = 1 if pattern.groups else 0
    if rule.mode == "first":
        match = pattern.search(html)
        return [] if match is None else [match.group(group)]
    return [match.group(group) for match in pattern.finditer(html)]


def _lxml_root(html: str) -> Any:
    from lxml import etree

    parser = etree.HTMLParser(recover=True, encoding="utf-8")
    return etree.fromstring(html.encode("utf-8", "replace"), parser=parser)


def _xpath(root: Any, rule: Rule) -> list[Any]:
    if root is None:
        return []
    result = rule.compiled(root)
    if isinstance(result, bool | float):
        return [int(result) if isinstance(result, float) and result.is_integer() else result]
    if isinstance(result, str):
        return [_clean(result)]
    items = result if rule.mode != "first" else result[:1]
    return [_clean(item if isinstance(item, str) else "".join(item.itertext())) for item in items]


#: JSON-LD nested deeper than this is skipped, as a block that is not JSON is: real blocks
#: are a few levels deep, and a value must fit in a record every output can write (orjson
#: stops at 255 levels). A block of 100,000 levels made the whole page a parse error.
MAX_JSONLD_DEPTH = 100


def jsonld_objects(tree: LexborHTMLParser) -> list[Any]:
    """The page's JSON-LD objects: each ``<script type="application/ld+json">`` that parses
    (and nests at most :data:`MAX_JSONLD_DEPTH` levels), a list spread into its items, an
    object with ``@graph`` replaced by the graph's items."""
    objects: list[Any] = []
    for node in tree.css('script[type="application/ld+json" i]'):
        try:
            data = json.loads(node.text(deep=True) or "null")
        except (ValueError, RecursionError):  # not JSON, or nested past the recursion limit
            continue
        if _nests_within(data, MAX_JSONLD_DEPTH):
            _flatten(data, objects)
    return objects


def _nests_within(data: Any, limit: int) -> bool:
    """True when no list or object in ``data`` is more than ``limit`` levels deep."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            items: Iterable[Any] = value.values()
        elif isinstance(value, list):
            items = value
        else:
            continue
        if depth > limit:
            return False
        stack.extend((item, depth + 1) for item in items)
    return True


def _flatten(data: Any, into: list[Any]) -> None:
    if isinstance(data, list):
        for item in data:
            _flatten(item, into)
    elif isinstance(data, dict) and "@graph" in data:
        _flatten(data["@graph"], into)
    elif data is not None:
        into.append(data)


def _jsonld_value(objects: list[Any], rule: Rule) -> Any:
    return rule.compiled.search(objects) if objects else None


def _jsonld(objects: list[Any], rule: Rule) -> list[Any]:
    if rule.mode == "first":
        return []  # the plain form reads _jsonld_value
    value = _jsonld_value(objects, rule)
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _convert(value: Any, rule: Rule, found: Values) -> Any:
    if rule.type is None or value is None:
        return value
    try:
        return convert(value, rule.type)
    except (ValueError, TypeError):
        if rule.name not in found.unconverted:
            found.unconverted.append(rule.name)
        return None


def convert(value: Any, kind: str) -> Any:
    """``value`` as ``kind`` (:data:`TYPES`); raises ValueError or TypeError when it is not one."""
    if kind == "str":
        return value if isinstance(value, str) else json.dumps(value)
    if kind == "float":
        if isinstance(value, bool):
            raise TypeError("a boolean is not a number")
        return float(value.strip() if isinstance(value, str) else value)
    if kind == "int":
        if isinstance(value, bool):
            raise TypeError("a boolean is not a number")
        number = float(value.strip() if isinstance(value, str) else value)
        if not number.is_integer():
            raise ValueError(f"not an integer: {value!r}")
        return int(number)
    if kind == "bool":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError(f"not a boolean: {value!r}")
    text = str(value).strip()
    return datetime.date.fromisoformat(text[:10]).isoformat()


def load_rules_file(path: str) -> dict[str, dict[str, Any]]:
    """Rules from a TOML file: ``[NAME]`` tables with ``spec`` (and ``type``, ``when``), or
    ``NAME = "SPEC"`` lines. A file that cannot be read is a :class:`ConfigError`."""
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except OSError as exc:
        raise ConfigError(f"--extract-file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--extract-file {path}: {exc}") from None
    rules: dict[str, dict[str, Any]] = {}
    for name, given in data.items():
        if isinstance(given, str):
            rules[name] = {"spec": given}
        elif isinstance(given, dict):
            rules[name] = given
        else:
            raise ConfigError(f"--extract-file {path}: rule {name!r} must be a string or table")
    return rules


def stored_rules(options: Mapping[str, Any] | None) -> tuple[Rule, ...]:
    """The rules a crawl stored with its options (a state file's, a Redis crawl's config)."""
    return tuple(Rule(**item) for item in (options or {}).get("extract") or ())


def parse_specs(given: Iterable[str]) -> dict[str, str]:
    """``NAME=SPEC`` arguments as ``{name: spec}``; one without ``=`` is a ConfigError."""
    specs: dict[str, str] = {}
    for item in given:
        name, sep, spec = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--extract {item!r}: expected NAME=SPEC, e.g. price=css:.price")
        if name.strip() in specs:
            raise ConfigError(f"extract rule {name.strip()!r} is given twice")
        specs[name.strip()] = spec
    return specs
