"""JSON text in and out: orjson when installed (the ``[fast]`` extra, faster on page
records), else the standard library. Both write UTF-8 text, not ``\\u`` escapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _pick() -> tuple[Callable[[Any], str], Callable[[str | bytes], Any]]:
    try:
        import orjson
    except ImportError:
        encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
        return encode, json.loads
    return (lambda value: orjson.dumps(value).decode()), orjson.loads


dumps, loads = _pick()
