"""Each page's content as GitHub-flavoured Markdown: :func:`page_markdown` (pure).

``scope="main"`` is the main content: a semantic page's one ``<main>`` or ``<article>``
(:mod:`._content_fast`), else what trafilatura chooses (the best word-shingle F1 of the
extractors measured, ``bench/RESULTS.md`` sections 17, 29 and 34; boilerplate named by class or
id out first, :mod:`._content_boiler`, and page shapes it loses the article on mended,
:mod:`._content_shape`); our layer fixes the tree (:mod:`._content_tree`: URLs,
code languages, quotes, ordered lists) and html-to-markdown writes the Markdown.
``scope="full"`` is the whole page the same way, without the choosing. Both libraries are
the ``markdown`` extra, imported on the first call.
"""

from __future__ import annotations

import sys
from typing import Literal

from .._exceptions import ConfigError, MissingExtra
from ._decode import decode_html

Scope = Literal["main", "full"]
SCOPES: tuple[Scope, ...] = ("main", "full")
INSTALL_HINT = "pip install 'sitecrawl[markdown]'"
#: The modules the extra brings (``lxml_html_clean``: justext imports it through lxml).
_MODULES = ("trafilatura", "html_to_markdown", "lxml", "lxml_html_clean")


def _missing(reason: str) -> MissingExtra:
    return MissingExtra(
        f"Markdown needs trafilatura and html-to-markdown ({reason}): {INSTALL_HINT}",
        extra="markdown",
    )


def require_markdown() -> None:
    """Raise :class:`~sitecrawl.MissingExtra` (one line, naming the install command) unless
    the markdown extra's modules can be imported; cheap: they are found, not imported (a
    crawl with ``markdown=True`` asks before it starts; its parser processes import them)."""
    for name in _MODULES:
        try:
            found = sys.modules[name] if name in sys.modules else _find_spec(name)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise _missing(f"no module {name}")


def _find_spec(name: str) -> object:
    from importlib.util import find_spec  # (only a crawl asking for Markdown pays its import)

    return find_spec(name)


def page_markdown(html: str | bytes, url: str, *, scope: Scope = "main") -> str:
    """The page's content as GitHub-flavoured Markdown ("" when it has none).

    ``url`` is the page's address: links and images come out absolute, resolved against it
    (and ``<base href>``). ``scope="main"`` drops navigation, header, footer, sidebars,
    cookie banners, share bars and ads; ``"full"`` keeps the whole body (scripts and styles
    out). ``html`` as bytes is decoded as the crawler decodes a body (BOM, ``<meta>``,
    detection). Raises :class:`~sitecrawl.MissingExtra` when the markdown extra is not
    installed, :class:`~sitecrawl.ConfigError` for another scope.
    """
    if scope not in SCOPES:
        raise ConfigError(f"markdown scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    try:
        from . import _content_tree
    except ImportError as exc:
        # One line: what failed to import (some ImportErrors have a message of several lines).
        reason = f"no module {exc.name}" if exc.name else (str(exc).splitlines() or ["?"])[0]
        raise _missing(reason) from None
    text = decode_html(html) if isinstance(html, bytes) else html
    return _content_tree.convert(text, url, scope)
