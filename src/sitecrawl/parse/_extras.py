"""Whether an optional extra is installed, found without importing it (nor the module that
uses it: a crawl's start imports neither unless a page needs them)."""

from __future__ import annotations

import importlib.util


def pdf_available() -> bool:
    """True when the ``pdf`` extra is installed (imports nothing)."""
    return importlib.util.find_spec("pypdfium2") is not None
