"""The public faces' lazy re-exports. A package face lists each public name once, in its stub
``__init__.pyi`` (``from ._module import name as name``: what type checkers read); its
``__init__.py`` is two lines::

    from .._lazy import lazy_face
    _LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)

At run time a name is imported from its module on first use, so importing a package costs
only what its caller reads, and optional dependencies stay unimported."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

#: One re-export of a stub: ``from .module import name as name`` (ruff keeps one a line).
_REEXPORT = re.compile(r"^from (\.[\w.]*) import (\w+) as (\w+)$", re.MULTILINE)


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


def lazy_face(
    package: str, init_file: str
) -> tuple[dict[str, str], list[str], Callable[[str], Any]]:
    """``(table, __all__, __getattr__)`` of the package whose ``__init__.py`` is
    ``init_file``, read from the stub beside it: ``table`` maps each re-exported name to its
    module, ``__all__`` lists them in ruff's order (constants, classes, the rest)."""
    # (os.path, not pathlib: a parser process would import pathlib for this alone)
    with open(os.path.splitext(init_file)[0] + ".pyi", encoding="utf-8") as file:
        stub = file.read()
    table: dict[str, str] = {}
    for module, name, alias in _REEXPORT.findall(stub):
        if alias != name:
            raise ImportError(f"{package}: {name} re-exported as {alias}")
        table[name] = module
    return table, sorted(table, key=_ruff_order), lazy_getattr(package, table)


def _ruff_order(name: str) -> tuple[int, str]:
    if len(name) > 1 and name.isupper():
        return 0, name
    return (1 if name[:1].isupper() else 2), name
