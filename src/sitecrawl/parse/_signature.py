"""A page's content signature for the near-duplicate audit (:mod:`sitecrawl.audit._neardup`):
the compiled loop in ``_minhash`` when it was built, else the same answers in Python (the tests
hold the two together). Pure.

The text is read as tokens: runs of ASCII letters and digits and of non-ASCII bytes of its
UTF-8, ASCII lower-cased (Markdown's and HTML text's punctuation is not content). Then:

- ``exact``: a 64-bit FNV-1a hash of the token sequence (16 hex digits in the record,
  ``content_hash``): pages with the same words in the same order are exact duplicates;
- ``minhash``: :data:`NPERM` 32-bit minima, little-endian (512 bytes, ``content_minhash``), of
  the hashes of every 5-token shingle under :data:`NPERM` multiply-shift hashes
  ``(a*x + b) >> 32`` (a odd; 2-universal): the share of equal minima of two pages estimates
  the Jaccard similarity of their shingle sets, within about 0.03 at 0.9 (``sqrt(J(1-J)/128)``).

A text of fewer than :data:`MIN_TOKENS` tokens has neither: too short to call a duplicate
(an error page, a redirect stub).
"""

from __future__ import annotations

import re
import struct

__all__ = ["MIN_TOKENS", "NPERM", "content_signature", "signature_py", "similarity"]

NPERM = 128
SHINGLE = 5
MIN_TOKENS = 10
_M64 = (1 << 64) - 1
_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_GOLDEN = 0x9E3779B97F4A7C15
_TOKEN = re.compile(rb"[0-9A-Za-z\x80-\xff]+")
_PACK = struct.Struct(f"<{NPERM}I")


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _perms() -> tuple[list[int], list[int]]:
    state, mul, add = 0x5173C4A1, [], []
    for _ in range(NPERM):
        state = (state + _GOLDEN) & _M64
        mul.append(_mix(state) | 1)
        state = (state + _GOLDEN) & _M64
        add.append(_mix(state))
    return mul, add


_MUL, _ADD = _perms()


def _token_hash(token: bytes) -> int:
    h = _FNV_OFFSET
    for c in token.lower():
        h = ((h ^ c) * _FNV_PRIME) & _M64
    return h


def signature_py(utf8: bytes) -> tuple[int | None, bytes | None, int]:
    """``(exact, minhash, tokens)`` of a UTF-8 text (see the module docstring)."""
    hashes = [_token_hash(m) for m in _TOKEN.findall(utf8)]
    if len(hashes) < MIN_TOKENS:
        return None, None, len(hashes)
    exact = _FNV_OFFSET
    for h in hashes:
        exact = ((exact ^ h) * _FNV_PRIME) & _M64
    shingles = set()
    for i in range(len(hashes) - SHINGLE + 1):
        s = 0
        for h in hashes[i : i + SHINGLE]:
            s = (s * _GOLDEN + h) & _M64
        shingles.add(_mix(s))
    minima = [
        min(((a * x + b) & _M64) >> 32 for x in shingles) for a, b in zip(_MUL, _ADD, strict=True)
    ]
    return exact, _PACK.pack(*minima), len(hashes)


def similarity_py(a: bytes, b: bytes) -> float:
    """The share of equal minima of two signatures."""
    if len(a) != _PACK.size or len(b) != _PACK.size:
        raise ValueError(f"a signature is {_PACK.size} bytes")
    same: int = sum(x == y for x, y in zip(_PACK.unpack(a), _PACK.unpack(b), strict=True))
    return same / NPERM


try:
    from ._minhash import signature as _signature
    from ._minhash import similarity
except ImportError:  # installed without a C compiler
    _signature = signature_py
    similarity = similarity_py


def content_signature(text: str) -> tuple[str | None, bytes | None]:
    """A text's ``(content_hash, content_minhash)`` as the record keeps them: the exact hash
    as 16 hex digits and the MinHash bytes, or ``(None, None)`` for a text too short."""
    exact, minhash, _ = _signature(text.encode("utf-8", "surrogatepass"))
    return (None, None) if exact is None else (f"{exact:016x}", minhash)
