"""A page's Markdown cut into chunks for retrieval: :func:`chunks` (pure).

The cuts go at headings first, then between paragraphs (blocks: a paragraph, a list, a quote,
a table, a code block), then, for a paragraph still too long, between sentences and at last
between words. A fenced code block is never cut, and a table only between rows, each piece
repeating the header row; so a chunk is over ``max_tokens`` only when it is one code block, one
table row or one word that is. A section's heading line opens its first chunk, unless that
would make a chunk of the heading alone (the heading path still names it). Each chunk carries
its heading path (the headings it sits under, outer first) and the count of its text's tokens.

Tokens are counted by :func:`count_tokens`, an approximation of the OpenAI tokenizers that
needs no vocabulary file: a run of ASCII letters is ``ceil(len / 7)`` tokens, a run of other
letters (Cyrillic, Greek, Arabic, ...) ``ceil(len / 2)``, a run of digits ``ceil(len / 3)``
(the tokenizers cut numbers in groups of three), and each letter of a script written without
spaces (CJK, kana, hangul, Thai) and each other visible character one. It errs on the high
side, so a chunk rarely holds more real tokens than it says; its error against cl100k_base and
o200k_base on the article benchmark's pages is in ``bench/RESULTS.md`` section 17
(``bench/token_count.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_UNSPACED = "\u0e00-\u0e7f\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"
#: The runs the approximation counts (see the module's docstring).
_PIECES = re.compile(
    rf"(?P<ascii>[A-Za-z]+)|(?P<unspaced>[{_UNSPACED}])|(?P<letters>[^\W\dA-Za-z_{_UNSPACED}]+)"
    r"|(?P<digits>\d+)|(?P<other>\S)"
)
#: Characters a token holds, by run (others: one token each).
_PER_TOKEN = {"ascii": 7, "letters": 2, "digits": 3}
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
#: A sentence's end: ``.!?…`` and spaces, or an ideographic full stop (no space after it).
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+|(?<=[\u3002\uff01\uff1f])")


def count_tokens(text: str) -> int:
    """The approximate token count of ``text`` (see the module's docstring)."""
    total = 0
    for piece in _PIECES.finditer(text):
        per_token = _PER_TOKEN.get(piece.lastgroup or "", 1)
        total += -(-(piece.end() - piece.start()) // per_token)
    return total


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of a page's Markdown: ``headings`` is its heading path (outer first),
    ``tokens`` the :func:`count_tokens` of ``text``."""

    headings: tuple[str, ...]
    text: str
    tokens: int


@dataclass(frozen=True, slots=True)
class _Block:
    kind: str  # "heading", "code", "table" or "text"
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def chunks(markdown: str, *, max_tokens: int = 512) -> list[Chunk]:
    """``markdown`` in chunks of at most ``max_tokens`` tokens each (see the module)."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
    found: list[Chunk] = []
    path: list[tuple[int, str]] = []
    section: list[str] = []

    def close() -> None:
        headings = tuple(title for _, title in path)
        found.extend(Chunk(headings, text, count_tokens(text)) for text in section)
        section.clear()

    pending: list[str] = []  # the section's pieces not yet packed
    for block in _blocks(markdown):
        if block.kind == "heading":
            section.extend(_pack(pending, max_tokens))
            pending.clear()
            close()
            level, title = _heading(block.lines[0])
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, title))
            pending.append(block.text)
        else:
            pending.extend(_pieces(block, max_tokens))
    section.extend(_pack(pending, max_tokens))
    close()
    return found


def _pack(pieces: list[str], max_tokens: int) -> list[str]:
    """Pieces joined by blank lines into texts of at most ``max_tokens`` (a lone piece may be
    over); a section that is only its heading gives nothing (the heading is in the path of
    what follows)."""
    if len(pieces) == 1 and _HEADING.match(pieces[0]):
        return []
    texts: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if current and count_tokens("\n\n".join([*current, piece])) > max_tokens:
            if current != pieces[:1] or not _HEADING.match(current[0]):
                texts.append("\n\n".join(current))
            # else the heading alone would be a chunk: it goes, as the path keeps it
            current = []
        current.append(piece)
    if current:
        texts.append("\n\n".join(current))
    return texts


def _pieces(block: _Block, max_tokens: int) -> list[str]:
    """A block as pieces that each fit, cut only where the block allows."""
    if count_tokens(block.text) <= max_tokens or block.kind == "code":
        return [block.text]
    if block.kind == "table":
        return _table_pieces(block.lines, max_tokens)
    return _text_pieces(block.text, max_tokens)


def _table_pieces(rows: tuple[str, ...], max_tokens: int) -> list[str]:
    head = list(rows[:2]) if len(rows) > 1 and set(rows[1]) <= set("|-: ") else []
    pieces: list[str] = []
    current = list(head)
    for row in rows[len(head) :]:
        if len(current) > len(head) and count_tokens("\n".join([*current, row])) > max_tokens:
            pieces.append("\n".join(current))
            current = list(head)
        current.append(row)
    pieces.append("\n".join(current))
    return pieces


def _text_pieces(text: str, max_tokens: int) -> list[str]:
    """A long paragraph cut between sentences, a long sentence between words."""
    units: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        if count_tokens(sentence) <= max_tokens:
            units.append(sentence)
        else:
            units.extend(sentence.split())
    pieces: list[str] = []
    current = ""
    for unit in units:
        joined = f"{current} {unit}" if current else unit
        if current and count_tokens(joined) > max_tokens:
            pieces.append(current)
            joined = unit
        current = joined
    if current:
        pieces.append(current)
    return pieces


def _heading(line: str) -> tuple[int, str]:
    match = _HEADING.match(line)
    assert match is not None  # only called on heading blocks
    return len(match.group(1)), (match.group(2) or "").strip()


def _blocks(markdown: str) -> list[_Block]:
    """The Markdown's blocks: headings, fenced code, tables, and the text between blank lines."""
    lines = markdown.splitlines()
    blocks: list[_Block] = []
    at = 0
    while at < len(lines):
        line = lines[at]
        fence = _FENCE.match(line)
        if not line.strip():
            at += 1
        elif fence:
            end = _fence_end(lines, at, fence.group(1))
            blocks.append(_Block("code", tuple(lines[at : end + 1])))
            at = end + 1
        elif _HEADING.match(line):
            blocks.append(_Block("heading", (line,)))
            at += 1
        else:
            kind = "table" if line.lstrip().startswith("|") else "text"
            end = at
            while end + 1 < len(lines) and _continues(lines[end + 1], kind):
                end += 1
            blocks.append(_Block(kind, tuple(lines[at : end + 1])))
            at = end + 1
    return blocks


def _fence_end(lines: list[str], start: int, opening: str) -> int:
    """The index of the line closing the fence opened at ``start`` (the last line if none)."""
    closing = re.compile(rf"^\s*{re.escape(opening[0])}{{{len(opening)},}}\s*$")
    for at in range(start + 1, len(lines)):
        if closing.match(lines[at]):
            return at
    return len(lines) - 1


def _continues(line: str, kind: str) -> bool:
    if not line.strip() or _FENCE.match(line) or _HEADING.match(line):
        return False
    return line.lstrip().startswith("|") == (kind == "table")
