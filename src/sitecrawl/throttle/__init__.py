"""Per-host politeness slots: in-process, and shared through Redis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _LAZY)
