"""The text of an element as a browser shows it (``innerText``), whitespace collapsed.

Pure: a selectolax (Lexbor) node in, a string out.
"""

from __future__ import annotations

from collections.abc import Iterable

from selectolax.lexbor import LexborNode


def clean(text: str) -> str:
    """Whitespace collapsed (any Unicode whitespace, as ``str.split()`` reads it), ends stripped."""
    return " ".join(text.split())


#: Elements whose edges separate words in a browser's ``innerText``: ``<br>`` and the
#: elements a browser lays out as blocks, list items or table parts (the HTML standard's
#: rendering rules). Inline ones (``<b>``, ``<span>``, ``<a>``...) separate nothing.
_BREAK_NAMES = """br address article aside blockquote body caption center colgroup dd details
    dialog dir div dl dt fieldset figcaption figure footer form frameset h1 h2 h3 h4 h5 h6
    header hgroup hr html legend li listing main menu nav ol optgroup option p plaintext pre
    search section summary table tbody td tfoot th thead tr ul xmp"""
_BREAKS = frozenset(_BREAK_NAMES.split())


def inner_text(node: LexborNode) -> str:
    """The text of an element as a browser shows it, whitespace collapsed: words are
    separated at ``<br>`` and at the edges of block elements (``a<br>b`` and
    ``<div>a</div>b`` give ``a b``), not at inline ones (``fo<b>o</b>`` gives ``foo``)."""
    return inner_texts([node])[0]


def inner_texts(nodes: Iterable[LexborNode]) -> list[str]:
    """:func:`inner_text` of each node. An element holding one text node, the usual case,
    costs one look at its children more than its plain text; only one with an element
    inside is walked."""
    texts: list[str] = []
    for node in nodes:
        child = node.child
        if child is None:
            texts.append("")
        elif child.next is None and (text := child.text_content) is not None:
            texts.append(" ".join(text.split()))
        else:
            texts.append(_walked_text(node))
    return texts


def _walked_text(node: LexborNode) -> str:
    walk = node.traverse()
    next(walk)  # the node itself
    for inner in walk:
        if inner.tag in _BREAKS:
            break
    else:  # no break inside: the text as it is
        return clean(node.text_lexbor())
    pieces: list[str] = []
    resume: list[tuple[bool, LexborNode | None]] = []  # (block?, next sibling) per level
    child = node.child
    while True:
        while child is None:
            if not resume:
                return clean("".join(pieces))
            block, child = resume.pop()
            if block:
                pieces.append(" ")
        tag = child.tag
        if tag == "-text":
            pieces.append(child.text_content or "")
            child = child.next
        elif tag == "-comment":
            child = child.next
        else:
            block = tag in _BREAKS
            if block:
                pieces.append(" ")
            resume.append((block, child.next))
            child = child.child
