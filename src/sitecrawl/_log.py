"""The ``sitecrawl`` logger: where a library user routes what the crawl has to say.

Warnings: a robots.txt Crawl-delay capped, a robots.txt that could not be read (the origin is
disallowed for now), a request given up after its retries. Debug: one record per page. The
logger has a :class:`logging.NullHandler` only, as a library's should: nothing is printed
unless the application configures logging (``logging.basicConfig()``, or a handler on
``logging.getLogger("sitecrawl")``). The command line prints its own summary instead.
"""

from __future__ import annotations

import logging

logger = logging.getLogger("sitecrawl")
logger.addHandler(logging.NullHandler())
