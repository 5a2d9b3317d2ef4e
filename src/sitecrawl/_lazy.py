"""The public faces' lazy re-exports: a package's ``__init__`` lists each public name with the
private module it lives in, and a name is imported on first use (so importing a package
costs only what its caller reads, and optional dependencies stay unimported)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_getattr(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``table`` maps a public name to the module
    (relative to ``package``) that defines it."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next access skips __getattr__
        return value

    return __getattr__
