"""The site the issues tests crawl: a problem planted for every check of the issues table
(docs/checks.md), beside clean pages that must produce no finding.

Clean: ``/``, ``/clean/a``, ``/clean/b`` and the hreflang pair ``/en/`` and ``/de/`` (each
naming both and an x-default, linking back). Everything else is planted; :data:`PLANTED` says
which check each page must raise.
"""

from __future__ import annotations

import asyncio

from aiohttp import web

from servers import html

CLEAN = ("/", "/clean/a", "/clean/b", "/en/", "/de/")
LAST_MODIFIED = "Wed, 21 Oct 2026 07:28:00 GMT"

#: check -> the path of the page (or link target) its row names.
PLANTED: dict[str, str] = {
    "link.broken": "/missing",
    "link.redirect": "/moved1",
    "redirect.chain": "/moved2",
    "title.missing": "/t/bare",
    "title.duplicate": "/t/dup1",
    "h1.missing": "/t/bare",
    "h1.duplicate": "/t/dup2",
    "meta_description.missing": "/t/bare",
    "meta_description.duplicate": "/t/dup1",
    "page.slow": "/t/slow",
    "page.noindex": "/sm/noindex",
    "page.canonicalised": "/sm/canon",
    "image.missing_alt": "/t/img",
    "exact_duplicate": "/dup/exact1",
    "near_duplicate": "/dup/near1",
    "hreflang.invalid_code": "/hl/bad",
    "hreflang.conflict": "/hl/bad",
    "hreflang.no_return": "/hl/bad",
    "hreflang.target_not_200": "/hl/bad",
    "hreflang.target_noindex": "/hl/bad",
    "hreflang.target_canonicalised": "/hl/bad",
    "hreflang.no_self_reference": "/hl/bad",
    "hreflang.no_x_default": "/hl/bad",
    "sitemap.broken": "/sm/gone",
    "sitemap.redirect": "/sm/moved",
    "sitemap.non_indexable": "/sm/noindex",
    "sitemap.canonicalised": "/sm/canon",
    "sitemap.blocked": "/blocked/page",
    "sitemap.missing": "/t/unlisted",
    "sitemap.orphan": "/sm/orphan",
    "structured_data.invalid_json": "/sd/bad",
    "structured_data.unknown_type": "/sd/bad",
    "structured_data.unknown_property": "/sd/bad",
    "structured_data.missing_required": "/sd/bad",
    "structured_data.missing_recommended": "/sd/bad",
}

#: Pages of one long text (crawled with --near-duplicates): word for word the same on the two
#: ``exact`` pages, one word changed on ``near2`` (about 97 % of the shingles shared), its own
#: text on ``other`` (in no cluster).
DUPLICATES = ("/dup/exact1", "/dup/exact2", "/dup/near1", "/dup/near2", "/dup/other")


def long_text(seed: int, changed: int | None = None) -> str:
    """300 words of a fixed pseudo-random text (``changed``: that word replaced)."""
    state, words = seed * 7919 + 1, []
    for i in range(300):
        state = (state * 1103515245 + 12345) % 2**31
        words.append("changed" if i == changed else f"w{state % 5000}")
    return " ".join(words)


#: Pages listed in the sitemap.
LISTED = (
    "/",
    "/clean/a",
    "/clean/b",
    "/en/",
    "/de/",
    "/hl/bad",
    "/hl/uk",
    "/hl/fr1",
    "/hl/fr2",
    "/hl/noindex",
    "/hl/canon",
    "/hl/noreturn",
    "/t/bare",
    "/t/dup1",
    "/t/dup2",
    "/t/slow",
    "/t/img",
    "/sm/gone",
    "/sm/moved",
    "/sm/noindex",
    "/sm/canon",
    "/sm/orphan",
    "/blocked/page",
    "/sd/bad",
    *DUPLICATES,
)
#: Where the home page links (the others: from /hl/bad), each once.
LINKED = (
    "/clean/a",
    "/clean/b",
    "/en/",
    "/de/",
    "/hl/bad",
    "/t/bare",
    "/t/dup1",
    "/t/dup2",
    "/t/slow",
    "/t/img",
    "/t/unlisted",
    "/missing",
    "/moved1",
    "/moved2",
    "/sd/bad",
    *DUPLICATES,
)
#: JSON-LD with one of each structured-data finding (crawled with --structured-data): not
#: JSON, a type schema.org lacks, a misspelt property, a Review without the itemReviewed
#: Google requires, an Offer without the url it recommends.
STRUCTURED = (
    '{"@context": "https://schema.org", "@type": "Product", "name": ',
    '{"@context": "https://schema.org", "@type": "Gizmo", "name": "g"}',
    '{"@context": "https://schema.org", "@type": "Person", "name": "n", "nmae": "x"}',
    '{"@context": "https://schema.org", "@type": "Review", "author": {"@type": "Person",'
    ' "name": "A"}, "reviewRating": {"@type": "Rating", "ratingValue": "4"}}',
    '{"@context": "https://schema.org", "@type": "Offer", "price": "1", "priceCurrency": "EUR",'
    ' "availability": "a", "priceValidUntil": "p", "itemCondition": "c"}',
)
SLOW_SECONDS = 1.05  # the audit's slow threshold is 1,000 ms


def _page(name: str, *, head: str = "", body: str = "") -> web.Response:
    """A page with its own title, h1 and description (no finding of its own)."""
    return html(
        f"<h1>{name} heading</h1><p>About {name}.</p>{body}",
        title=f"{name} title",
        head=f'<meta name="description" content="{name} description">{head}',
    )


def _alternates(origin: str, pairs: list[tuple[str, str]]) -> str:
    return "".join(
        f'<link rel="alternate" hreflang="{lang}" href="{origin}{path}">' for lang, path in pairs
    )


def seo_app() -> web.Application:
    async def home(request: web.Request) -> web.Response:
        links = "".join(f'<a href="{path}">to {path}</a>' for path in LINKED)
        return _page("Home", body=links)

    async def clean(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        response = _page(f"Clean {name}", body='<a href="/">Home</a>')
        if name == "a":
            response.headers["Last-Modified"] = LAST_MODIFIED
        return response

    async def language(request: web.Request) -> web.Response:
        lang = request.match_info["lang"]
        origin = f"http://{request.host}"
        head = _alternates(origin, [("en", "/en/"), ("de", "/de/"), ("x-default", "/en/")])
        return _page(f"Language {lang}", head=head, body='<a href="/">Home</a>')

    async def hreflang_bad(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        pairs = [
            ("en-UK", "/hl/uk"),  # UK is no ISO 3166-1 code (GB is)
            ("fr", "/hl/fr1"),
            ("FR", "/hl/fr2"),  # one language, two URLs
            ("es", "/hl/gone"),  # 404
            ("it", "/hl/noindex"),
            ("pt", "/hl/canon"),
            ("nl", "/hl/noreturn"),  # names nobody back
        ]  # and no self-reference, no x-default
        targets = "".join(f'<a href="{path}">{lang}</a>' for lang, path in pairs)
        return _page("Hreflang bad", head=_alternates(origin, pairs), body=targets)

    async def hreflang_target(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        origin = f"http://{request.host}"
        if name == "noreturn":
            return _page("Hreflang noreturn")
        back = _alternates(origin, [("en", "/hl/bad"), ("x-default", "/hl/bad")])
        own = {"uk": "en-GB", "fr1": "fr", "fr2": "fr-CA", "noindex": "it", "canon": "pt"}
        head = back + _alternates(origin, [(own[name], f"/hl/{name}")])
        if name == "noindex":
            head += '<meta name="robots" content="noindex">'
        if name == "canon":
            head += f'<link rel="canonical" href="{origin}/clean/b">'
        return _page(f"Hreflang {name}", head=head)

    async def bare(request: web.Request) -> web.Response:
        return html("<p>No title, no h1, no description.</p>")

    async def duplicate(request: web.Request) -> web.Response:
        return html(
            "<h1>Shared heading</h1><p>Twin.</p>",
            title="Shared title",
            head='<meta name="description" content="Shared description">',
        )

    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(SLOW_SECONDS)
        return _page("Slow")

    async def image(request: web.Request) -> web.Response:
        return _page("Image", body='<img src="/pic.png">')

    async def unlisted(request: web.Request) -> web.Response:
        return _page("Unlisted")

    async def not_found(request: web.Request) -> web.Response:
        return html("<h1>Not found</h1>", title="Not found", status=404)

    def redirect(to: str) -> web.RequestHandler:
        async def handler(request: web.Request) -> web.Response:
            raise web.HTTPMovedPermanently(to)

        return handler

    async def sitemap_page(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        origin = f"http://{request.host}"
        if name == "noindex":
            return _page("Sitemap noindex", head='<meta name="robots" content="noindex">')
        if name == "canon":
            return _page("Sitemap canon", head=f'<link rel="canonical" href="{origin}/clean/a">')
        return _page("Sitemap orphan")

    async def blocked(request: web.Request) -> web.Response:
        return _page("Blocked")

    async def robots(request: web.Request) -> web.Response:
        sitemap = f"http://{request.host}/sitemap.xml"
        return web.Response(text=f"User-agent: *\nDisallow: /blocked/\nSitemap: {sitemap}\n")

    async def sitemap(request: web.Request) -> web.Response:
        origin = f"http://{request.host}"
        urls = "".join(f"<url><loc>{origin}{path}</loc></url>" for path in LISTED)
        return web.Response(
            text='<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>',
            content_type="application/xml",
        )

    async def png(request: web.Request) -> web.Response:
        return web.Response(body=b"\x89PNG\r\n\x1a\n", content_type="image/png")

    async def duplicated(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        seed = {"exact1": 1, "exact2": 1, "near1": 2, "near2": 2, "other": 3}[name]
        text = long_text(seed, changed=250 if name == "near2" else None)
        return html(
            f"<main><p>{text}</p></main><footer>Dup {name}</footer>",
            title=f"Dup {name}",
            head=f'<meta name="description" content="Dup {name}">',
        )

    async def structured(request: web.Request) -> web.Response:
        scripts = "".join(f'<script type="application/ld+json">{j}</script>' for j in STRUCTURED)
        return _page("Structured", head=scripts)

    app = web.Application()
    routes = [
        ("/", home),
        ("/clean/{name}", clean),
        ("/{lang:en|de}/", language),
        ("/hl/bad", hreflang_bad),
        ("/hl/{name:uk|fr1|fr2|noindex|canon|noreturn}", hreflang_target),
        ("/t/bare", bare),
        ("/t/{name:dup1|dup2}", duplicate),
        ("/t/slow", slow),
        ("/t/img", image),
        ("/t/unlisted", unlisted),
        ("/{name:missing|hl/gone|sm/gone}", not_found),
        ("/moved1", redirect("/clean/a")),
        ("/moved2", redirect("/moved3")),
        ("/moved3", redirect("/clean/b")),
        ("/sm/moved", redirect("/clean/a")),
        ("/sm/{name:noindex|canon|orphan}", sitemap_page),
        ("/blocked/page", blocked),
        ("/robots.txt", robots),
        ("/sitemap.xml", sitemap),
        ("/pic.png", png),
        ("/sd/bad", structured),
        ("/dup/{name:exact1|exact2|near1|near2|other}", duplicated),
    ]
    for path, handler in routes:
        app.router.add_get(path, handler)
    return app
