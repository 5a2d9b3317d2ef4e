"""What a body would cost the HTML parser, estimated before it parses it.

Lexbor, like every HTML5 tree builder, is quadratic on some markup: a start tag walks the
stack of open elements (so 100,000 unclosed ``<div>`` s cost 5 billion steps), an
element's attributes are checked against each other, and a ``<select>`` re-checks its
options as each one is added. :func:`markup_cost` reads the body once, as the tokenizer
would (comments, raw text such as ``<script>``, quoted attribute values), and keeps an
estimate of the stack of open elements: void elements are never pushed, an end tag pops to
its element when that is near the top and in scope, and the common implied ends (``<p>``
closed by a block, ``<li>`` by ``<li>``, cells and rows, options) pop the top. It sums:

- for each tag, the depth of that estimated stack (the tree builder's scope walks);
- for each element with ``a`` attributes, ``a * (a - 1) / 2``;
- for each ``<option>`` in a ``<select>``, :data:`OPTION_WEIGHT` times the options before it.

The estimate errs high (an element the tree builder would ignore still counts), so a page
under :data:`BUDGET` parses in bounded time; a page over it is not parsed. Real pages stay
far below (a page's cost is about its tags times its depth: tens of thousands by tens).

The scan is compiled (``sitecrawl.parse._scan``) when the C extension was built; this module's
:func:`markup_cost_py` is its twin, held to the same answers by the tests.

:func:`structured_marks` (also compiled, with its twin) reads a page's text for the marks of
structured data, so that a page without them skips that extraction's walks of the tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = [
    "BUDGET",
    "MarkupCost",
    "bound_of",
    "markup_bound",
    "markup_cost",
    "markup_cost_py",
    "markup_counts",
    "markup_counts_py",
    "markup_reason",
    "structured_marks",
    "structured_marks_py",
    "too_costly",
]

#: Steps of estimated tree-builder work above which a page is not parsed.
BUDGET = 100_000_000
#: An option's check against one option before it, in scope-walk steps.
OPTION_WEIGHT = 5
#: Bodies shorter than this cannot reach the budget (about n * n / 2 steps at most).
_ALWAYS_CHEAP = 8192
#: How far below the top of the stack an end tag looks for its element.
END_TAG_REACH = 64


class MarkupCost(NamedTuple):
    """The estimate (it stops growing once past the budget) and its largest parts."""

    cost: int
    depth: int  # the deepest estimated stack of open elements
    attributes: int  # the most attributes on one element
    options: int  # the most options in one select


# Implied-end groups: a start tag closes the open elements at the top of the stack whose
# group it names (a block closes a <p>, a row closes cells and rows, ...).
_P, _LI, _DTDD, _OPTION, _OPTGROUP, _CELL, _ROW, _SECTION, _RUBY, _A, _HEADING, _BUTTON = (
    1 << i for i in range(12)
)
_BLOCKS = frozenset(
    b"address article aside blockquote center details dialog dir div dl fieldset figcaption "
    b"figure footer header hgroup main menu nav ol p search section summary ul pre listing "
    b"form table hr xmp plaintext".split()
)
#: tag -> (its group, the groups its start tag closes)
_GROUPS: dict[bytes, tuple[int, int]] = {name: (0, _P) for name in _BLOCKS}
_GROUPS.update(
    {
        b"p": (_P, _P),
        b"li": (_LI, _P | _LI),
        b"dd": (_DTDD, _P | _DTDD),
        b"dt": (_DTDD, _P | _DTDD),
        b"option": (_OPTION, _OPTION),
        b"optgroup": (_OPTGROUP, _OPTION | _OPTGROUP),
        b"td": (_CELL, _CELL),
        b"th": (_CELL, _CELL),
        b"tr": (_ROW, _CELL | _ROW),
        b"tbody": (_SECTION, _CELL | _ROW | _SECTION),
        b"thead": (_SECTION, _CELL | _ROW | _SECTION),
        b"tfoot": (_SECTION, _CELL | _ROW | _SECTION),
        b"rb": (_RUBY, _RUBY),
        b"rt": (_RUBY, _RUBY),
        b"rtc": (_RUBY, _RUBY),
        b"rp": (_RUBY, _RUBY),
        b"a": (_A, _A),
        b"button": (_BUTTON, _BUTTON),
        **{f"h{n}".encode(): (_HEADING, _P | _HEADING) for n in range(1, 7)},
    }
)
_VOID = frozenset(
    b"area base basefont bgsound br col embed frame hr img input keygen link meta param "
    b"source track wbr".split()
)
#: Elements whose content is text up to their end tag (outside SVG and MathML).
_RAW = frozenset(b"script style xmp iframe noembed noframes textarea title".split())
_FOREIGN = frozenset((b"svg", b"math"))
#: Foreign elements whose content is HTML again.
_INTEGRATION = frozenset(b"foreignobject desc title mi mo mn ms mtext annotation-xml".split())
#: HTML start tags that end SVG or MathML content (the tree builder pops out of it).
_BREAKOUT = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i "
    b"img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt "
    b"u ul var".split()
)
_SCOPE = frozenset(b"applet caption html table td th marquee object template".split())
_TABLE_SCOPE = frozenset((b"html", b"table", b"template"))
_TABLE_PARTS = frozenset(b"table tbody thead tfoot tr td th caption colgroup".split())
#: End tags the tree builder never pops an element for.
_KEPT_OPEN = frozenset((b"body", b"html", b"br"))


def _stops(name: bytes) -> frozenset[bytes]:
    """The elements an end tag ``name`` does not look past (its "scope")."""
    if name in _TABLE_PARTS:
        return _TABLE_SCOPE
    if name == b"li":
        return _SCOPE | {b"ol", b"ul"}
    return _SCOPE


_SPACE = b" \t\n\f\r"
_TAG_NAME = re.compile(rb"[^ \t\n\f\r/>]*")
_ATTR_NAME = re.compile(rb".[^ \t\n\f\r/>=]*", re.S)
_UNQUOTED = re.compile(rb"[^ \t\n\f\r>]*")
_SKIP_SPACE = re.compile(rb"[ \t\n\f\r]*")
_SKIP_SPACE_SLASH = re.compile(rb"[ \t\n\f\r/]*")
_COMMENT_END = re.compile(rb"--!?>")


def _raw_end(name: bytes) -> re.Pattern[bytes]:
    return re.compile(rb"</" + re.escape(name) + rb"[ \t\n\f\r/>]", re.I)


_RAW_ENDS = {name: _raw_end(name) for name in _RAW}


def _tag_end(body: bytes, pos: int) -> tuple[int, int, bool]:
    """From just past a tag's name: ``(position past its '>', attributes, self-closing)``;
    position -1 when the body ends inside the tag."""
    n = len(body)
    attributes = 0
    while True:
        skipped = pos
        pos = _SKIP_SPACE_SLASH.match(body, pos).end()  # type: ignore[union-attr]
        if pos >= n:
            return -1, attributes, False
        if body[pos] == 0x3E:  # '>', self-closing right after a '/' outside a value
            return pos + 1, attributes, pos > skipped and body[pos - 1] == 0x2F
        attributes += 1
        pos = _ATTR_NAME.match(body, pos).end()  # type: ignore[union-attr]
        after = _SKIP_SPACE.match(body, pos).end()  # type: ignore[union-attr]
        if after < n and body[after] == 0x3D:  # '='
            pos = _SKIP_SPACE.match(body, after + 1).end()  # type: ignore[union-attr]
            if pos < n and body[pos] in (0x22, 0x27):  # a quoted value
                close = body.find(body[pos : pos + 1], pos + 1)
                if close < 0:
                    return -1, attributes, False
                pos = close + 1
            else:
                pos = _UNQUOTED.match(body, pos).end()  # type: ignore[union-attr]


def markup_cost_py(body: bytes, budget: int = BUDGET) -> MarkupCost:
    """The estimate of the module docstring, in Python (the twin of ``_scan.markup_cost``)."""
    n = len(body)
    stack: list[bytes] = []
    foreign: list[bool] = []  # per open element: is its content SVG or MathML?
    cost = depth = most_attributes = options = most_options = 0
    pos = 0
    while cost <= budget:
        lt = body.find(b"<", pos)
        if lt < 0 or lt + 1 >= n:
            break
        c = body[lt + 1]
        in_foreign = bool(foreign) and foreign[-1]
        if c == 0x21:  # '!'
            if body.startswith(b"<!--", lt):
                end = _COMMENT_END.search(body, lt + 2)
                pos = end.end() if end else n
            elif in_foreign and body.startswith(b"<![CDATA[", lt):
                end_at = body.find(b"]]>", lt + 9)
                pos = end_at + 3 if end_at >= 0 else n
            else:
                end_at = body.find(b">", lt + 2)
                pos = end_at + 1 if end_at >= 0 else n
            continue
        closing = c == 0x2F  # '/'
        start = lt + 2 if closing else lt + 1
        if start >= n or not 0x61 <= body[start] | 0x20 <= 0x7A:  # not a tag name
            if c == 0x3F or (closing and start < n and body[start] != 0x3E):
                end_at = body.find(b">", start)  # "<?x>", "</ x>": bogus comments
                pos = end_at + 1 if end_at >= 0 else n
            else:
                pos = start + 1 if closing else start  # "</>" is dropped, "<" is text
            continue
        name_end = _TAG_NAME.match(body, start).end()  # type: ignore[union-attr]
        name = body[start:name_end].lower()
        pos, attributes, self_closing = _tag_end(body, name_end)
        if pos < 0:  # the body ends inside the tag: the parser drops it
            break
        if closing:
            if name in _KEPT_OPEN:
                continue
            stops = _stops(name)
            top = len(stack)
            for k in range(top - 1, max(top - 1 - END_TAG_REACH, -1), -1):
                cost += 1
                if stack[k] == name:
                    del stack[k:], foreign[k:]
                    break
                if stack[k] in stops:
                    break
            continue
        cost += attributes * (attributes - 1) // 2
        most_attributes = max(most_attributes, attributes)
        if in_foreign and name in _BREAKOUT:
            while foreign and foreign[-1]:
                stack.pop(), foreign.pop()
            in_foreign = False
        group, closes = _GROUPS.get(name, (0, 0))
        while closes and stack and _GROUPS.get(stack[-1], (0, 0))[0] & closes:
            stack.pop(), foreign.pop()
        cost += len(stack)
        if name == b"select":
            options = 0
        elif group & (_OPTION | _OPTGROUP) and b"select" in stack[-3:]:
            cost += options * OPTION_WEIGHT
            options += 1
            most_options = max(most_options, options)
        if name in _VOID or (self_closing and (in_foreign or name in _FOREIGN)):
            continue
        stack.append(name)
        foreign.append(name in _FOREIGN or (in_foreign and name not in _INTEGRATION))
        depth = max(depth, len(stack))
        if not in_foreign:
            if name in _RAW:
                end = _RAW_ENDS[name].search(body, pos)
                pos = end.start() if end else n
            elif name == b"plaintext":
                break
    return MarkupCost(cost, depth, most_attributes, options=most_options)


def too_costly(found: MarkupCost, budget: int = BUDGET) -> str | None:
    """Why a page over the budget is not parsed (None when it is under)."""
    if found.cost <= budget:
        return None
    parts = sorted(
        [
            (found.depth * found.depth // 2, f"elements nested {found.depth:,}+ deep"),
            (found.attributes**2 // 2, f"{found.attributes:,}+ attributes on one element"),
            (found.options**2 * OPTION_WEIGHT // 2, f"{found.options:,}+ options in a select"),
        ]
    )
    return f"markup too costly to parse: {parts[-1][1]}"


#: The bytes that can stand right before an attribute's name (see :func:`markup_bound`), and
#: ``\v``, which cannot but is cheaper to count with the others (a bound may count more).
_SEPARATORS = b" \t\n\v\f\r/\"'"


def markup_counts_py(body: bytes) -> tuple[int, int]:
    """``(tags, separators)``: the ``<`` bytes, and the :data:`_SEPARATORS` bytes (the twin of
    ``_scan.markup_counts``)."""
    return body.count(b"<"), len(body) - len(body.translate(None, _SEPARATORS))


def bound_of(tags: int, separators: int) -> int:
    """What :func:`markup_cost` can reach at most in a body with these counts.

    Every tag starts at a ``<``, so there are at most ``tags`` start tags and end tags. A
    start tag adds the depth of the stack, at most the start tags before it; an end tag at
    most :data:`END_TAG_REACH` steps; an option at most :data:`OPTION_WEIGHT` times the tags
    before it. An attribute's name starts right after whitespace, a ``/`` or the quote that
    closes a value (the tag's name ends at whitespace or ``/``; an unquoted value at
    whitespace), a different byte for each: a body's attributes number at most
    ``separators``, so their pairs at most ``separators ** 2 / 2``."""
    return (1 + OPTION_WEIGHT) * tags * tags + END_TAG_REACH * tags + separators * separators // 2


#: :func:`structured_marks` bits: an ``itemscope`` attribute (Microdata), a ``typeof`` one
#: (RDFa: without it a ``property`` or ``vocab`` makes no item), a JSON-LD ``<script>``'s type.
MARK_ITEMSCOPE, MARK_TYPEOF, MARK_JSON_LD = 1, 2, 4
#: A JSON-LD type's end before its ``json``: ``ld+``, or ``ld&`` and a character reference.
_JSON_LD_BEFORE = re.compile(rb"ld(?:\+|&[#0-9a-z;]{0,32})\Z")
_BEFORE_NAME = frozenset(b" \t\n\f\r/\"'")
_AFTER_NAME = frozenset(b" \t\n\f\r/>=")


def structured_marks_py(text: str) -> int:
    """The ``MARK_*`` bits of what ``text`` may hold (the twin of ``_marks.structured_marks``).
    It errs towards yes, never no: the words in ASCII case-insensitively; ``itemscope`` and
    ``typeof`` where an attribute's name can stand (after whitespace, ``/`` or a quote; before
    whitespace, ``/``, ``>``, ``=`` or the end), also in text or a script; ``ld+json``
    anywhere, also with its ``+`` a character reference (``ld&#43;json``: ``ld&``, up to 32
    of ``[#0-9A-Za-z;]``, ``json``)."""
    low = text.encode("utf-8", "surrogatepass").lower()  # (ASCII only: same length)
    found = 0
    for word, bit in ((b"itemscope", MARK_ITEMSCOPE), (b"typeof", MARK_TYPEOF)):
        at = low.find(word, 1)
        while at > 0 and not found & bit:
            end = at + len(word)
            if low[at - 1] in _BEFORE_NAME and (end == len(low) or low[end] in _AFTER_NAME):
                found |= bit
            at = low.find(word, at + 1)
    at = low.find(b"json")
    while at >= 0 and not found & MARK_JSON_LD:
        if _JSON_LD_BEFORE.search(low, max(0, at - 35), at):
            found |= MARK_JSON_LD
        at = low.find(b"json", at + 1)
    return found


def _compiled_or_twin() -> tuple[
    Callable[[bytes, int], MarkupCost], Callable[[bytes], tuple[int, int]]
]:
    try:
        from ._scan import markup_cost as compiled
        from ._scan import markup_counts
    except ImportError:  # installed without a C compiler
        return markup_cost_py, markup_counts_py
    return (lambda body, budget: MarkupCost(*compiled(body, budget))), markup_counts


markup_cost, markup_counts = _compiled_or_twin()
try:
    from ._marks import structured_marks
except ImportError:  # installed without a C compiler
    structured_marks = structured_marks_py


def markup_bound(body: bytes) -> int:
    """An upper bound of ``markup_cost(body).cost`` from two byte counts (:func:`bound_of`):
    a few times cheaper than the scan, and under :data:`BUDGET` for ordinary pages."""
    return bound_of(*markup_counts(body))


def markup_reason(body: bytes, budget: int = BUDGET) -> str | None:
    """Why ``body`` should not be parsed, or None: most bodies are too short to cost much, or
    their :func:`markup_bound` is under the budget; the others are scanned."""
    if len(body) < _ALWAYS_CHEAP or markup_bound(body) <= budget:
        return None
    return too_costly(markup_cost(body, budget), budget)
