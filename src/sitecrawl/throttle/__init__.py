"""Per-host politeness slots: in-process, and shared through Redis."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._local import Throttle as Throttle
    from ._local import parse_retry_after as parse_retry_after
    from ._redis import RedisThrottle as RedisThrottle

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "RedisThrottle": "._redis",
    "Throttle": "._local",
    "parse_retry_after": "._local",
}

__all__ = [
    "RedisThrottle",
    "Throttle",
    "parse_retry_after",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # the next access skips __getattr__
    return value
