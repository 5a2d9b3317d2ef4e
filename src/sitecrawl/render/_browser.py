"""The browser pool: one headless Chromium driven by Playwright, ``tabs`` renders at a time.

The browser is found, never downloaded (:func:`find_browser`: ``--browser PATH``, a CDP
endpoint ``ws://...``, or ``chromium`` on PATH) and launched on the first render, so a crawl
in ``auto`` mode that renders nothing never starts it. Each of the ``tabs`` has its own
browser context (cookies, cache and storage) and page, reused render after render until the
browser restarts (a new page per render costs a renderer process: ~100 ms more); every request
of a tab goes to its current render's route handler (:mod:`._routes`). The browser is
restarted, once the renders in flight have finished, every ``restart_every`` renders, when its
memory (the proportional set size of its processes, read from ``/proc`` every
:data:`MEMORY_EVERY` renders) passes ``max_memory_mb``, and when it has crashed; a render the
crash took is tried once more.

A render's budget is ``Render.timeout`` seconds for the navigation (the ``load`` event) and
the network idle together, counted from when it has a tab (the wait for a free one is not
the render's: ``Rendered.ms``). The network is idle when no request has been in flight for
``Render.idle`` seconds since the load event, and the page's code waits for nothing either:
no ``fetch`` or XHR of its own is pending and none ended in the last ``Render.idle`` seconds,
and (for the first :data:`TIMER_WAIT` seconds after the load) no short timer
(``setTimeout`` of 1 s or less) is pending: a page whose
load does not come in time fails (:class:`RenderError`); one that never goes idle (polling)
is read as it is at the deadline, ``complete`` False. The budget holds whatever the page's
scripts do: every wait on the browser is bounded, and a page whose scripts never yield (a
``while (true)`` after the load) blocks the reading of its DOM, which gets
:data:`READ_WAIT` seconds more and then fails the render; its tab is closed (a closed
context takes its renderer process with it), and a tab or browser that does not close within
:data:`CLOSE_WAIT` seconds is left to the next browser start (the process killed, then).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib.util
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from .._config_render import Render
from .._exceptions import ConfigError, RenderError
from .._log import logger
from ._procs import kill_tree, tree_memory_mb

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Route

INSTALL_EXTRA = "pip install 'sitecrawl[render]'"
INSTALL_BROWSER = "apt-get install chromium"
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--mute-audio",
]
#: Renders between two readings of the browser's memory.
MEMORY_EVERY = 20
_ENDPOINTS = ("ws://", "wss://", "http://", "https://")
_READ_DOM = "document.documentElement.outerHTML"
#: Counts what the page's own code still waits for: short timers (``setTimeout`` of at most
#: 1 s), ``fetch`` calls and their bodies, XHRs (each until a task after it ended, so the code
#: it resolves has run), and when the last of them ended: content written after a delay or
#: once data came is waited for too (timers: at most :data:`TIMER_WAIT` s after the load).
_WATCH_JS = """
(() => {
  const set = window.setTimeout, clear = window.clearTimeout, ids = new Set();
  let busy = 0, last = 0;
  const done = () => set.call(window, () => { busy--; last = performance.now(); }, 0);
  const track = (promise) => { busy++; promise.then(done, done); return promise; };
  window.setTimeout = function (fn, delay, ...rest) {
    if (typeof fn !== 'function' || delay > 1000) return set.call(window, fn, delay, ...rest);
    const id = set.call(window, function () {
      ids.delete(id); last = performance.now(); return fn.apply(this, rest);
    }, delay);
    ids.add(id);
    return id;
  };
  window.clearTimeout = function (id) { ids.delete(id); return clear.call(window, id); };
  const fetch = window.fetch;
  window.fetch = function (...args) { return track(fetch.apply(this, args)); };
  for (const name of ['json', 'text', 'arrayBuffer', 'blob']) {
    const read = Response.prototype[name];
    Response.prototype[name] = function (...args) { return track(read.apply(this, args)); };
  }
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    busy++;
    this.addEventListener('loadend', done);
    return send.apply(this, args);
  };
  Object.defineProperty(window, '__sitecrawlWaits', {
    get: () => [ids.size, busy, performance.now() - last],
  });
})();
"""
_WAITS = "window.__sitecrawlWaits || [0, 0, 1e9]"
_STOPPED = "not rendered: the crawl was stopped"
#: Seconds after the load event during which pending short timers delay the network idle.
TIMER_WAIT = 2.0
#: Seconds the DOM is waited for after the render's budget (a page whose scripts never
#: yield never gives it); and a tab's or the browser's close.
READ_WAIT = 2.0
CLOSE_WAIT = 5.0


@dataclasses.dataclass(frozen=True, slots=True)
class Rendered:
    """A render's result: the DOM as HTML; False ``complete`` when the render was cut off at
    its budget before the network went idle; ``ms`` the render's own time (with a tab),
    ``wait_ms`` the wait for a free tab before it; ``png`` and ``thumb`` its screenshot and
    thumbnail (``Render.screenshot``), ``a11y`` axe-core's violations (``Render.a11y``;
    :mod:`._extras`)."""

    html: str
    complete: bool
    ms: float
    wait_ms: float = 0.0
    png: bytes | None = None
    thumb: bytes | None = None
    a11y: list[dict[str, Any]] | None = None


class PageRoutes(Protocol):
    """What the pool needs of one render's route handler."""

    in_flight: int
    last_change: float

    async def handle(self, route: Route) -> None: ...


def find_browser(render: Render) -> str:
    """The browser to drive: a CDP endpoint as given, else a Chromium executable's path.
    Raises :class:`ConfigError` naming the command to install what is missing."""
    if importlib.util.find_spec("playwright") is None:
        raise ConfigError(f"rendering needs Playwright: {INSTALL_EXTRA}")
    given = render.browser
    if given and given.startswith(_ENDPOINTS):
        return given
    found = given or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    if found is None:
        raise ConfigError(f"rendering needs Chromium: {INSTALL_BROWSER} (or --browser PATH)")
    if not (os.path.isfile(found) and os.access(found, os.X_OK)):
        raise ConfigError(f"no browser executable at {found}: {INSTALL_BROWSER}")
    return found


class _Tab:
    """One browser context and its page, reused render after render; its requests go to the
    current render's handler (none between renders: aborted)."""

    def __init__(self, generation: int) -> None:
        #: The browser start this tab belongs to (its page is opened on first use).
        self.generation = generation
        self.routes: PageRoutes | None = None
        self.context: BrowserContext | None = None
        self.page: Page | None = None

    async def open(self, browser: Browser, user_agent: str) -> _Tab:
        self.context = await browser.new_context(user_agent=user_agent, service_workers="block")
        await self.context.add_init_script(script=_WATCH_JS)
        await self.context.route("**/*", self.handle)
        self.page = await self.context.new_page()
        return self

    async def handle(self, route: Route) -> None:
        routes = self.routes
        if routes is None:
            from playwright.async_api import Error

            with contextlib.suppress(Error):
                await route.abort("aborted")
            return
        await routes.handle(route)

    async def close(self) -> bool:
        """Close the tab's context (and so its page and renderer); False when it did not
        close within :data:`CLOSE_WAIT` seconds."""
        from playwright.async_api import Error

        context, self.context, self.page = self.context, None, None
        if context is None:
            return True
        try:
            async with asyncio.timeout(CLOSE_WAIT):
                await context.close()
        except TimeoutError:
            return False
        except Error:
            pass  # the browser is gone: nothing left to close
        return True


class BrowserPool:
    """``async with BrowserPool(render, user_agent) as pool: html = await pool.render(...)``."""

    def __init__(self, render: Render, user_agent: str) -> None:
        self._options = render
        self._user_agent = user_agent
        self._where = find_browser(render)
        self._tabs = asyncio.Semaphore(render.tabs)
        self._gate = asyncio.Condition()
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._idle: list[_Tab] = []
        self._active = 0
        self._since_start = 0
        self._restart = False
        #: The waits on the browser in flight -> their grace (:meth:`_bounded`).
        self._waits: dict[asyncio.Timeout, float] = {}
        #: Set by :meth:`stop`.
        self.stopping = False
        #: A switch Chromium ignores, on our browser's command line: finds its process.
        self._marker = f"--sitecrawl-pool={os.getpid()}-{id(self)}"
        #: Renders done, browser starts (the first included), and the last memory reading.
        self.renders = 0
        self.starts = 0
        self.memory_mb: float | None = None

    async def __aenter__(self) -> BrowserPool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close_browser()
        if self._playwright is not None:
            with contextlib.suppress(Exception):
                await self._playwright.stop()
            self._playwright = None

    @property
    def _restart_due(self) -> bool:
        return self._restart or self._since_start >= self._options.restart_every

    def _browser_of(self, tab: _Tab) -> Browser:
        if self._browser is None or tab.generation != self.starts:
            from playwright.async_api import Error

            raise Error("the browser was closed")
        return self._browser

    async def _close_browser(self) -> None:
        browser, self._browser = self._browser, None
        idle, self._idle = self._idle, []
        for tab in idle:
            await tab.close()
        if browser is None:
            return
        from playwright.async_api import Error

        try:
            async with asyncio.timeout(CLOSE_WAIT):
                await browser.close()
        except TimeoutError:
            logger.warning("the browser did not close in %g s: killed", CLOSE_WAIT)
            kill_tree(self._marker)
        except Error:
            pass  # already gone

    async def _launch(self) -> None:
        from playwright.async_api import Error, async_playwright

        await self._close_browser()
        try:
            if self._playwright is None:
                self._playwright = await async_playwright().start()
            chromium = self._playwright.chromium
            if self._where.startswith(_ENDPOINTS):
                self._browser = await chromium.connect_over_cdp(self._where, timeout=30_000)
            else:
                sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
                self._browser = await chromium.launch(
                    executable_path=self._where,
                    args=[*CHROMIUM_ARGS, *sandbox, self._marker],
                    timeout=60_000,
                )
        except Error as exc:
            raise RenderError(f"the browser did not start: {exc.message}", url="") from None
        self.starts += 1
        self._since_start = 0
        self._restart = False

    async def _acquire(self) -> tuple[Browser, _Tab]:
        await self._tabs.acquire()
        try:
            async with self._gate:
                while self._restart_due and self._active > 0:
                    await self._gate.wait()
                browser = self._browser
                if browser is None or not browser.is_connected() or self._restart_due:
                    if browser is not None:
                        logger.info("restarting the browser after %d renders", self._since_start)
                    await self._launch()
                assert self._browser is not None
                self._active += 1
                self._since_start += 1
                browser = self._browser
                tab = self._idle.pop() if self._idle else _Tab(self.starts)
            return browser, tab
        except BaseException:
            self._tabs.release()
            raise

    async def _release(self, tab: _Tab | None, *, reuse: bool = False) -> None:
        async with self._gate:
            self._active -= 1
            self.renders += 1
            if tab is not None:
                tab.routes = None
                if reuse and tab.generation == self.starts and not self._restart_due:
                    self._idle.append(tab)
                elif not await tab.close():
                    logger.warning("a tab did not close in %g s: restarting", CLOSE_WAIT)
                    self._restart = True
            if self.renders % MEMORY_EVERY == 0 and not self._where.startswith(_ENDPOINTS):
                self.memory_mb = tree_memory_mb(os.getpid())
                self._restart = self._restart or self.memory_mb > self._options.max_memory_mb
            self._gate.notify_all()
        self._tabs.release()

    async def render(self, url: str, routes: Callable[[], PageRoutes]) -> Rendered:
        """The DOM of ``url`` after network idle (or at the budget); ``routes()`` makes the
        handler of each try's requests. A crash is retried once; raises
        :class:`RenderError`."""
        from playwright.async_api import Error

        for attempt in (1, 2):
            if self.stopping:
                raise RenderError(_STOPPED, url=url)
            asked = time.monotonic()
            browser, tab = await self._acquire()
            wait_ms = round((time.monotonic() - asked) * 1000, 1)
            reuse = False
            try:
                if self.stopping:  # while it waited for a tab: the tab is as it was
                    reuse = True
                    raise RenderError(_STOPPED, url=url)
                rendered = await self._render_once(tab, url, routes())
                reuse = True
                return dataclasses.replace(rendered, wait_ms=wait_ms)
            except Error as exc:
                message = exc.message or type(exc).__name__
                gone = not browser.is_connected() or any(
                    word in message.lower() for word in ("crash", "closed")
                )
                if gone:
                    self._restart = True  # the next render starts a fresh browser
                if attempt == 1 and gone:
                    logger.warning("render of %s crashed, once more: %s", url, message)
                    continue
                raise RenderError(f"render failed: {message.splitlines()[0]}", url=url) from None
            finally:
                await self._release(tab, reuse=reuse)
        raise AssertionError("unreachable")

    async def _render_once(self, tab: _Tab, url: str, routes: PageRoutes) -> Rendered:
        options = self._options
        started = time.monotonic()
        deadline = started + options.timeout
        if tab.page is None:
            await tab.open(self._browser_of(tab), self._user_agent)
        page = tab.page
        assert page is not None
        tab.routes = routes
        try:
            async with self._bounded(options.timeout):
                await page.goto(url, wait_until="load", timeout=0)
        except TimeoutError:
            why = (
                "render stopped: the crawl was stopped before the load event"
                if self.stopping
                else f"render timed out: no load event in {options.timeout:g} s"
            )
            raise RenderError(why, url=url) from None
        complete = True
        try:
            async with self._bounded(deadline - time.monotonic()):
                await self._network_idle(page, routes)
        except TimeoutError:
            logger.info("%s: no network idle in %g s", url, options.timeout)
            complete = False
        try:
            async with self._bounded(deadline - time.monotonic(), grace=READ_WAIT):
                html: str = await page.evaluate(_READ_DOM)
        except TimeoutError:
            raise RenderError(
                f"render timed out: the page's scripts kept the browser busy past"
                f" {options.timeout:g} s",
                url=url,
            ) from None
        png = thumb = found = None
        if options.screenshot or options.a11y:  # the DOM as read, in the budget's grace
            from ._extras import screenshot, violations  # (axe-core's script: when asked)

            try:
                async with self._bounded(deadline - time.monotonic(), grace=options.timeout):
                    if options.screenshot:
                        png, thumb = await screenshot(page, options.screenshot)
                    if options.a11y:
                        found = await violations(page)
            except TimeoutError:
                raise RenderError(
                    "render timed out: no screenshot or accessibility check in time", url=url
                ) from None
        ms = round((time.monotonic() - started) * 1000, 1)
        return Rendered(html, complete, ms, png=png, thumb=thumb, a11y=found)

    @contextlib.asynccontextmanager
    async def _bounded(self, seconds: float, *, grace: float = 0.0) -> AsyncIterator[None]:
        """A wait on the browser: at most ``seconds`` + ``grace``, and ``grace`` once the pool
        stops (:meth:`stop`); :class:`TimeoutError` at the end."""
        seconds = grace + (0.0 if self.stopping else max(0.0, seconds))
        async with asyncio.timeout(seconds) as timeout:
            self._waits[timeout] = grace
            try:
                yield
            finally:
                del self._waits[timeout]

    def stop(self) -> None:
        """The crawl stops: renders in flight end now (what they have is read, within
        :data:`READ_WAIT` seconds), renders not begun are not made."""
        self.stopping = True
        try:
            now = asyncio.get_running_loop().time()
        except RuntimeError:  # called off the crawl's loop: renders not begun are not made
            return
        for timeout, grace in self._waits.items():
            timeout.reschedule(min(timeout.when() or now, now + grace))

    async def _network_idle(self, page: Page, routes: PageRoutes) -> None:
        """Return once the network is idle (see the module's docstring); the caller bounds
        the wait."""
        options = self._options
        loaded = time.monotonic()  # the idle window starts at the load event at the earliest
        idle_ms = options.idle * 1000
        while True:
            now = time.monotonic()
            quiet = now - max(routes.last_change, loaded)
            if routes.in_flight == 0 and quiet >= options.idle:
                timers, busy, since = await page.evaluate(_WAITS)
                if not busy and since >= idle_ms and (not timers or now - loaded >= TIMER_WAIT):
                    return
            await asyncio.sleep(0.02)
