"""JSON text in and out: orjson when installed (the ``[fast]`` extra, faster on page
records), else the standard library. Both write UTF-8 text, not ``\\u`` escapes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _pick() -> tuple[
    Callable[[Any], str],
    Callable[[Any], bytes],
    Callable[[Any], bytes],
    Callable[[str | bytes], Any],
]:
    try:
        import orjson
    except ImportError:
        encode = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode
        return (
            encode,
            (lambda value: encode(value).encode()),
            (lambda value: (encode(value) + "\n").encode()),
            json.loads,
        )
    newline = orjson.OPT_APPEND_NEWLINE
    return (
        (lambda value: orjson.dumps(value).decode()),
        orjson.dumps,
        (lambda value: orjson.dumps(value, option=newline)),
        orjson.loads,
    )


#: ``dumps(value)``: JSON text; ``dump_bytes(value)``: the same as UTF-8 bytes (for a wire that
#: takes bytes: no text to decode and encode again); ``dump_line(value)``: one JSON Lines line,
#: UTF-8 bytes with its newline (what a file of JSON Lines takes as it is).
dumps, dump_bytes, dump_line, loads = _pick()
