"""A generated product site for the custom extraction tests: 200 pages with prices in
attributes and text, lists of tags, JSON-LD in ``@graph`` and in separate scripts, and pages
missing each field. Deterministic."""

from __future__ import annotations

import json
import random

from aiohttp import web

TAGS = ["red", "blue", "big  one", "small", "sale", "new"]


def product_page(i: int, rng: random.Random) -> str:
    price = f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}"
    parts = [f"<html lang='en'><head><title>Product {i}</title>"]
    product = {"@type": "Product", "name": f"Thing {i}", "offers": {"price": price}}
    org = {"@type": "Organization", "name": "Shop"}
    layout = i % 4
    if layout == 0:
        graph = {"@context": "https://schema.org", "@graph": [org, product]}
        parts.append(f'<script type="application/ld+json">{json.dumps(graph)}</script>')
    elif layout == 1:
        parts.append(f'<script type="application/ld+json">{json.dumps(org)}</script>')
        parts.append(f'<script type="application/ld+json">{json.dumps(product)}</script>')
    elif layout == 2:
        parts.append('<script type="application/ld+json">{not json</script>')
    if i % 3 == 0:
        parts.append(f"<script>gtag('config', 'G-{i:04d}');</script>")
    parts.append("</head><body><main>")
    if i % 7 != 0:
        parts.append(f'<h1 class="name">  Thing\n {i} </h1>')
    if i % 5 != 0:
        parts.append(f'<span class="price" data-price=" {price} ">$ <b>{price}</b></span>')
    if i % 11 == 0:
        parts.append('<span class="price" data-price="n/a">call us</span>')
    tags = rng.sample(TAGS, rng.randint(0, 4))
    if tags or i % 2:
        items = "".join(f"<li>{tag}</li>" for tag in tags)
        parts.append(f'<ul class="tags">{items}</ul>')
    if i % 6 != 0:
        parts.append(f'<div class="sku">SKU-{i:05d}</div>')
    parts.append(f"<p>Text of product {i}.</p></main></body></html>")
    return "\n".join(parts)


def product_pages(count: int = 200) -> list[str]:
    rng = random.Random(16)
    return [product_page(i, rng) for i in range(count)]


def shop_app(count: int = 200) -> web.Application:
    """``/`` links to every product page ``/p/N`` (the pages of :func:`product_pages`)."""
    pages = product_pages(count)
    index = "".join(f'<a href="/p/{i}">{i}</a>' for i in range(count))

    async def home(request: web.Request) -> web.Response:
        return web.Response(text=f"<html><body>{index}</body></html>", content_type="text/html")

    async def product(request: web.Request) -> web.Response:
        number = int(request.match_info["n"])
        return web.Response(text=pages[number], content_type="text/html")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/p/{n}", product)
    return app
