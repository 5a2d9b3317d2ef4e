"""The page job's render step: decide (``auto``: :mod:`._detect`), render in the pool, parse
the rendered DOM with the crawl's own parser, and record what JavaScript changed.

The rendered DOM (``document.documentElement.outerHTML`` after network idle) goes through the
same extraction as an HTTP body, so every field of a rendered page is the DOM's, its
``body_hash`` too (the HTML body's goes to ``html_hash``, the DOM's size to ``dom_bytes``);
the page also gets ``rendered``, ``render_ms``, ``render_complete``, ``js_links`` /
``js_links_added``, ``js_changed`` and ``html_values`` (the raw HTML's values of the changed
fields), and ``blocked_resources``. A render that fails leaves the raw HTML's fields and
records a :class:`~sitecrawl.RenderError`.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING

from xxhash import xxh3_64_hexdigest

from .._exceptions import ParseError
from .._models import body_hash
from ..fetch import failed
from ._browser import BrowserPool
from ._detect import AutoPolicy, changes, gained
from ._routes import RouteRules, Routes

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._models import Page
    from ..control import CrawlScope
    from ..fetch import ParseFn, PoliteClient, Response
    from ..parse import Extracted


class Renderer:
    """Called by the page job with each parsed HTML page; returns the data to record.
    ``async with`` closes the browser."""

    def __init__(
        self,
        config: CrawlConfig,
        client: PoliteClient,
        allowed: Callable[[str], Awaitable[bool]],
        scope: CrawlScope,
        parse: ParseFn,
        reasons: Counter[str] | None = None,
    ) -> None:
        options = config.render
        self.pool = BrowserPool(options, config.user_agent)
        self.routes = RouteRules(
            client=client,
            allowed=allowed,
            crawled=scope.holds_host,
            allow_third_party=options.allow_third_party,
            max_bytes=config.limits.max_bytes,
        )
        self.policy = AutoPolicy() if options.mode == "auto" else None
        self._parse = parse
        self._screenshots = options.screenshot_dir
        #: Rendered pages by why: ``always``, a shell signal, ``template``.
        self.reasons: Counter[str] = Counter() if reasons is None else reasons

    async def __aenter__(self) -> Renderer:
        await self.pool.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.pool.__aexit__(exc_type, exc, tb)

    def stop(self) -> None:
        """The crawl stops: renders in flight end now (:meth:`BrowserPool.stop`)."""
        self.pool.stop()

    async def __call__(self, page: Page, response: Response, data: Extracted) -> Extracted:
        body = response.body
        assert body is not None
        url = response.url
        template = ""
        if self.policy is not None:
            why, template = self.policy.why(url, body, data)
            if why is None:
                return data
        else:
            why = "always"
        tries: list[Routes] = []

        def routes() -> Routes:
            tries.append(Routes(self.routes, response))
            return tries[-1]

        try:
            done = await self.pool.render(url, routes)
            dom = done.html.encode("utf-8", "replace")
            rendered = await self._parse(dom, "utf-8", url)
        except ParseError as exc:  # RenderError included
            failed(page, exc)
            return data
        finally:
            page.blocked_resources = tries[-1].blocked if tries else []
        page.rendered = True
        page.render_ms = done.ms
        page.render_wait_ms = done.wait_ms
        page.render_complete = done.complete
        page.html_hash, page.body_hash = page.body_hash, body_hash(dom)
        page.dom_bytes = len(dom)
        page.js_links, page.js_changed, page.html_values = changes(data, rendered)
        page.js_links_added = len(page.js_links)
        if done.png is not None and done.thumb is not None:
            page.screenshot = await asyncio.to_thread(
                save_screenshot, self._screenshots, url, done.png, done.thumb
            )
        if done.a11y is not None:
            page.a11y = done.a11y
        if self.policy is not None:
            self.policy.learner.observe(template, gained(data, rendered, url))
        self.reasons[why] += 1
        return rendered


def save_screenshot(directory: str, url: str, png: bytes, thumb: bytes) -> str:
    """Write a page's screenshot and thumbnail into ``directory`` (made when missing), each
    whole or not at all (a temporary file renamed); the PNG's path. The name is a hash of
    the URL: a later render of the URL replaces its files."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{xxh3_64_hexdigest(url.encode())}.png")
    for target, data in ((thumbnail_path(path), thumb), (path, png)):
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".part")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    return path


def thumbnail_path(png: str) -> str:
    """The thumbnail beside a screenshot: ``NAME.thumb.jpg``."""
    return png.removesuffix(".png") + ".thumb.jpg"
