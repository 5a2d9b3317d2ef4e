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

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
