"""Rendering pages in headless Chromium, only where a page needs it (``--render``).

::

    _detect.py    which pages to render (auto: shell signals, per-template learning) and
                  what JavaScript changed (pure)
    _routes.py    the browser's requests: the fetched document fulfilled, robots.txt and the
                  host's slot for crawled hosts, third parties and media blocked
    _browser.py   the Playwright browser pool: tabs, restarts, memory, crashes, the budget
    _procs.py     the browser's processes (/proc): memory, killing one that does not close
    _renderer.py  the page job's render step, gluing the three
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._browser import find_browser as find_browser
    from ._renderer import Renderer as Renderer

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "Renderer": "._renderer",
    "find_browser": "._browser",
}

__all__ = [
    "Renderer",
    "find_browser",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
