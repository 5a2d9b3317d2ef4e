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

from ._browser import find_browser as find_browser
from ._renderer import Renderer as Renderer
