"""A faceted shop and a site with a book in a folder: loopback fixtures for crawl control.

The shop: ``/`` links to ten listing pages ``/list?page=N``; each lists 50 products, under
``?sort=`` variants of itself and with ``utm_`` tracking parameters on product links, and each
product links back under ``?sort=`` and ``utm_`` variants. Crawled with ``--strip-params
'utm_*' --exclude '[?&]sort='`` it is exactly :func:`shop_paths`: 511 pages.
"""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web

from servers import html

PRODUCTS = 500
PER_LIST = 50
LISTS = PRODUCTS // PER_LIST
SORTS = ("price", "name", "new")


def shop_paths() -> set[str]:
    """Every page of the shop a crawl that strips ``utm_*`` and excludes ``sort=`` fetches."""
    return (
        {"/"}
        | {f"/list?page={n}" for n in range(1, LISTS + 1)}
        | {f"/product/{i}" for i in range(1, PRODUCTS + 1)}
    )


def shop_app(*, delay: float = 0.0, gate: threading.Event | None = None) -> web.Application:
    """Listings and products take ``delay`` seconds each, and wait while the test holds
    ``gate`` closed (cleared)."""

    async def slowly() -> None:
        while gate is not None and not gate.is_set():
            await asyncio.sleep(0.01)
        if delay:
            await asyncio.sleep(delay)

    async def home(request: web.Request) -> web.Response:
        links = [f'<a href="/list?page={n}">page {n}</a>' for n in range(1, LISTS + 1)]
        links += [f'<a href="/list?page=1&sort={s}">by {s}</a>' for s in SORTS]
        return html("".join(links), title="Shop")

    async def listing(request: web.Request) -> web.Response:
        page = int(request.query.get("page", "1"))
        await slowly()
        links = [f'<a href="/list?page={page}&sort={s}">by {s}</a>' for s in SORTS]
        links += [f'<a href="/list?sort={s}&page={page}">by {s}</a>' for s in SORTS]
        for i in range((page - 1) * PER_LIST + 1, page * PER_LIST + 1):
            links.append(f'<a href="/product/{i}?utm_source=list&utm_medium=web">{i}</a>')
            links.append(f'<a href="/product/{i}?utm_campaign=sale">{i} on sale</a>')
        if page < LISTS:
            links.append(f'<a href="/list?page={page + 1}&utm_source=next">next</a>')
        return html("".join(links), title=f"List {page}")

    async def product(request: web.Request) -> web.Response:
        i = int(request.match_info["i"])
        if not 1 <= i <= PRODUCTS:
            raise web.HTTPNotFound()
        await slowly()
        page = (i - 1) // PER_LIST + 1
        links = [
            f'<a href="/list?page={page}&sort=price">back</a>',
            f'<a href="/list?page={page}&utm_source=product">back</a>',
            f'<a href="/product/{i % PRODUCTS + 1}?utm_source=related">related</a>',
        ]
        return html(f"<h1>Product {i}</h1>" + "".join(links), title=f"Product {i}")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/list", listing)
    app.router.add_get("/product/{i}", product)
    return app


def book_app() -> web.Application:
    """``/book/`` (20 chapters, each linking out of the folder) inside a 40-page site."""

    async def page(request: web.Request) -> web.Response:
        path = request.path
        links = [f'<a href="/book/ch{n}.html">ch {n}</a>' for n in range(1, 21)]
        links += [f'<a href="/blog/{n}">post {n}</a>' for n in range(1, 21)]
        links += ['<a href="/">home</a>', '<a href="/book">the book, no slash</a>']
        return html("".join(links), title=path)

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/book", page)
    app.router.add_get("/book/", page)
    app.router.add_get("/book/{name}", page)
    app.router.add_get("/blog/{n}", page)
    return app
