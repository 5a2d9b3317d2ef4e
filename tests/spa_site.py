"""A generated single-page-application site: pages whose links and text JavaScript inserts
after a delay, beside static ones. The rendering tests and ``bench/render_bench.py`` crawl it.

Page ``i`` (0 is ``/``) is of a kind by ``i % 4`` (page 0 is an app shell):

- ``/static/i`` (0): plain HTML, no script, its links in the HTML;
- ``/app/i`` (1): an application shell (``<div id="root"></div>`` and ``/app.js``): the
  script waits :data:`JS_DELAY_MS`, fetches ``/api/page/app/i`` and a few ``/api/extra/k``
  at once, then writes the heading, text and every link into the root, and sets the title;
- ``/item/i`` (2): a header of a few words and a link home, then an empty ``<div id="app">``
  the same script fills;
- ``/blog/i`` (3): a full static article with its links, whose script only changes the
  title (``document.title``) and calls ``/api/secret``, which robots.txt disallows.

Every page links to page ``i + 1`` (so all are reachable from ``/``), to ``(7 i + 3) % N``
and home; JavaScript-only links exist on ``app`` and ``item`` pages only. Each app script also
asks ``/api/secret`` (disallowed) and loads ``http://localhost:PORT/third-party.js`` (another
host: a third party). Every API answer takes :data:`API_DELAY` seconds.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

JS_DELAY_MS = 60
API_DELAY = 0.02
EXTRA_CALLS = 3
KINDS = ("static", "app", "item", "blog")
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "omicron",
]

APP_JS = """
(function () {
  const root = document.getElementById('root') || document.getElementById('app');
  setTimeout(async function () {
    const path = location.pathname === '/' ? '/app/0' : location.pathname;
    const calls = [fetch('/api/page' + path).then(r => r.json())];
    for (let k = 0; k < %(extra)d; k++) calls.push(fetch('/api/extra/' + k).then(r => r.text()));
    fetch('/api/secret').catch(() => null);
    const [data] = await Promise.all(calls);
    if (root) {
      root.innerHTML = '<h1>' + data.h1 + '</h1><p>' + data.text + '</p>' +
        data.links.map(l => '<a href="' + l + '">to ' + l + '</a>').join(' ');
    }
    document.title = data.title;
  }, %(delay)d);
})();
"""
BLOG_JS = """
document.title = document.title + ' (by JavaScript)';
setTimeout(function () { fetch('/api/secret').catch(() => null); }, 10);
"""


def path_of(i: int) -> str:
    return "/" if i == 0 else f"/{KINDS[i % 4]}/{i}"


def kind_of(i: int) -> str:
    return "app" if i == 0 else KINDS[i % 4]


def links_of(i: int, pages: int) -> list[int]:
    return list(dict.fromkeys(j for j in (i + 1, (7 * i + 3) % pages, 0) if j < pages and j != i))


def expected_paths(pages: int) -> set[str]:
    return {path_of(i) for i in range(pages)}


def _words(i: int, n: int) -> str:
    return " ".join(WORDS[(i + k) % len(WORDS)] for k in range(n))


def _doc(title: str, body: str, head: str = "") -> web.Response:
    text = (
        f"<!doctype html><html><head><title>{title}</title>{head}</head><body>{body}</body></html>"
    )
    return web.Response(text=text, content_type="text/html")


def spa_app(pages: int = 200, *, third_party: str | None = None) -> web.Application:
    """The site of ``pages`` pages; ``third_party``: the origin of its third-party script
    (default ``http://localhost:PORT``, the same server under another host name)."""

    def anchors(i: int) -> str:
        return " ".join(f'<a href="{path_of(j)}">page {j}</a>' for j in links_of(i, pages))

    async def page(request: web.Request) -> web.Response:
        i = int(request.match_info.get("i", 0))
        kind = request.match_info.get("kind", "app")
        if not 0 <= i < pages or kind_of(i) != kind:
            raise web.HTTPNotFound()
        other = third_party or f"http://localhost:{request.url.port}"
        scripts = f'<script src="/app.js"></script><script src="{other}/third-party.js"></script>'
        if kind == "static":
            return _doc(f"Static {i}", f"<h1>Static {i}</h1><p>{_words(i, 60)}</p>{anchors(i)}")
        if kind == "blog":
            body = f"<h1>Blog {i}</h1><p>{_words(i, 200)}</p>{anchors(i)}<script>{BLOG_JS}</script>"
            return _doc(f"Blog {i}", body)
        if kind == "item":
            body = f'<header>Item {i} of the shop <a href="/">home</a></header><div id="app"></div>'
            return _doc("Loading", body + scripts)
        return _doc("Loading", '<div id="root"></div>' + scripts)

    async def api_page(request: web.Request) -> web.Response:
        await asyncio.sleep(API_DELAY)
        i = int(request.match_info["i"])
        if not 0 <= i < pages:
            raise web.HTTPNotFound()
        data = {
            "title": f"{kind_of(i).title()} {i}",
            "h1": f"Heading {i}",
            "text": _words(i, 40),
            "links": [path_of(j) for j in links_of(i, pages)],
        }
        return web.json_response(data)

    async def api_extra(request: web.Request) -> web.Response:
        await asyncio.sleep(API_DELAY)
        return web.Response(text=f"extra {request.match_info['k']}")

    async def secret(request: web.Request) -> web.Response:
        return web.json_response({"secret": True})

    async def app_js(request: web.Request) -> web.Response:
        text = APP_JS % {"extra": EXTRA_CALLS, "delay": JS_DELAY_MS}
        return web.Response(text=text, content_type="application/javascript")

    async def third(request: web.Request) -> web.Response:
        return web.Response(text="window.thirdParty = 1;", content_type="application/javascript")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nDisallow: /api/secret\n")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/{kind:static|app|item|blog}/{i:\\d+}", page)
    app.router.add_get("/api/page/{kind}/{i:\\d+}", api_page)
    app.router.add_get("/api/extra/{k}", api_extra)
    app.router.add_get("/api/secret", secret)
    app.router.add_get("/app.js", app_js)
    app.router.add_get("/third-party.js", third)
    app.router.add_get("/robots.txt", robots)
    return app
