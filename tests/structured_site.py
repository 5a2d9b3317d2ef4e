"""A site for the structured-data tests: clean pages in each syntax (JSON-LD, Microdata, RDFa
Lite) whose markup has everything Google asks for, and pages with one planted problem each.
:data:`PLANTED` says which page gives which finding; every other page must give none."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web


def _ld(*blocks: Any) -> str:
    return "".join(f'<script type="application/ld+json">{json.dumps(b)}</script>' for b in blocks)


ORGANIZATION = {
    "@context": "https://schema.org",
    "@type": "Organization",
    "@id": "/#org",
    "name": "Example Shop",
    "url": "https://shop.example/",
    "logo": "https://shop.example/logo.png",
    "sameAs": ["https://social.example/shop"],
    "description": "Shoes for trails.",
}
PRODUCT = {
    "@context": "https://schema.org/",
    "@type": "Product",
    "name": "Trail Runner",
    "image": ["https://shop.example/tr.jpg"],
    "description": "A light trail shoe.",
    "brand": {"@type": "Brand", "name": "Example"},
    "sku": "TR-1",
    "offers": {
        "@type": "Offer",
        "price": "89.90",
        "priceCurrency": "EUR",
        "availability": "https://schema.org/InStock",
        "url": "https://shop.example/tr",
        "priceValidUntil": "2030-01-01",
        "itemCondition": "https://schema.org/NewCondition",
    },
    "aggregateRating": {"@type": "AggregateRating", "ratingValue": 4.5, "reviewCount": 12},
    "review": [
        {
            "@type": "Review",
            "author": {"@type": "Person", "name": "Ann"},
            "datePublished": "2024-01-02",
            "reviewRating": {"@type": "Rating", "ratingValue": 5},
        }
    ],
}
FAQ = {
    "@context": "https://schema.org",
    "@type": "FAQPage",
    "mainEntity": [
        {
            "@type": "Question",
            "name": "Do they run small?",
            "acceptedAnswer": {"@type": "Answer", "text": "No, true to size."},
        }
    ],
}
BREADCRUMBS = {
    "@context": "https://schema.org",
    "@graph": [
        {
            "@type": "BreadcrumbList",
            "itemListElement": [
                {
                    "@type": "ListItem",
                    "position": 1,
                    "name": "Home",
                    "item": "https://shop.example/",
                },
                {"@type": "ListItem", "position": 2, "name": "Shoes"},
            ],
        }
    ],
}
VIDEO = {
    "@context": "https://schema.org",
    "@type": "VideoObject",
    "name": "Lacing",
    "description": "How to lace them.",
    "thumbnailUrl": "https://shop.example/lace.jpg",
    "uploadDate": "2024-02-03",
    "contentUrl": "https://shop.example/lace.mp4",
    "embedUrl": "https://shop.example/embed/lace",
    "duration": "PT1M30S",
}

ARTICLE_MICRODATA = """
<article itemscope itemtype="https://schema.org/NewsArticle">
  <h1 itemprop="headline">Trails reopen</h1>
  <img itemprop="image" src="/img/trail.jpg" alt="">
  <span itemprop="author" itemscope itemtype="https://schema.org/Person">
    <a itemprop="url" href="https://shop.example/ann">
      <span itemprop="name">Ann Writer</span></a></span>
  <time itemprop="datePublished" datetime="2024-04-01">1 April</time>
  <time itemprop="dateModified" datetime="2024-04-02">2 April</time>
  <p itemprop="articleBody">The trails are open again.</p>
</article>"""
BUSINESS_MICRODATA = """
<div itemscope itemtype="http://schema.org/Restaurant" itemref="phone">
  <span itemprop="name">Trail Cafe</span>
  <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
    <span itemprop="streetAddress">1 Hill Road</span></div>
  <a itemprop="url" href="https://shop.example/cafe">site</a>
  <div itemprop="geo" itemscope itemtype="http://schema.org/GeoCoordinates">
    <meta itemprop="latitude" content="45.1"><meta itemprop="longitude" content="6.2"></div>
  <meta itemprop="openingHoursSpecification" content="Mo-Fr 08:00-18:00">
  <meta itemprop="priceRange" content="$$">
</div>
<p id="phone" itemprop="telephone">+33 1 23 45 67 89</p>"""
RECIPE_RDFA = """
<div vocab="https://schema.org/" typeof="Recipe">
  <h1 property="name">Bean stew</h1>{image}
  <span property="author" typeof="Person"><span property="name">Cook</span></span>
  <time property="datePublished" datetime="2024-01-01">Jan</time>
  <p property="description">A stew.</p>
  <meta property="prepTime" content="PT15M"><meta property="cookTime" content="PT1H">
  <meta property="totalTime" content="PT1H15M"><meta property="recipeYield" content="4">
  <span property="recipeIngredient">beans</span><span property="recipeIngredient">salt</span>
  <p property="recipeInstructions">Cook the beans.</p>
  <span property="recipeCategory">dinner</span><span property="recipeCuisine">French</span>
  <meta property="keywords" content="stew">
  <div property="nutrition" typeof="NutritionInformation">
    <span property="calories">300 kcal</span></div>
  <div property="aggregateRating" typeof="AggregateRating">
    <meta property="ratingValue" content="4"><meta property="ratingCount" content="9"></div>
  <div property="video" typeof="VideoObject"><span property="name">Stew</span></div>
</div>
<meta property="og:title" content="Bean stew">"""
BREADCRUMB_RDFA = """
<ol vocab="https://schema.org/" typeof="BreadcrumbList">
  <li property="itemListElement" typeof="ListItem">
    <a property="item" typeof="WebPage" href="/"><span property="name">Home</span></a>
    <meta property="position" content="1"></li>
  <li property="itemListElement" typeof="ListItem">
    <span property="name">Shoes</span><meta property="position" content="2"></li>
</ol>"""
EVENT_JSONLD = {
    "@context": "https://schema.org",
    "@type": "Event",
    "name": "Trail race",
    "startDate": "2030-05-01T09:00",
    "endDate": "2030-05-01T17:00",
    "location": {"@type": "Place", "name": "Hill", "address": "1 Hill Road"},
    "description": "A race.",
    "image": "https://shop.example/race.jpg",
    "eventStatus": "https://schema.org/EventScheduled",
    "eventAttendanceMode": "https://schema.org/OfflineEventAttendanceMode",
    "offers": {
        "@type": "Offer",
        "price": "10",
        "priceCurrency": "EUR",
        "availability": "https://schema.org/InStock",
        "url": "https://shop.example/race",
        "priceValidUntil": "2030-04-30",
        "itemCondition": "https://schema.org/NewCondition",
    },
    "organizer": {"@type": "Organization", "name": "Club", "url": "https://club.example/"},
    "performer": {"@type": "Person", "name": "Runners"},
}
OTHER_VOCABULARY = {"@context": {"@vocab": "https://vocab.example/"}, "@type": "Gizmo", "zap": 1}

#: Path -> the page's body markup (its head's JSON-LD goes in ``HEADS``).
BODIES: dict[str, str] = {
    "/clean/article-microdata": ARTICLE_MICRODATA,
    "/clean/business-microdata": BUSINESS_MICRODATA,
    "/clean/recipe-rdfa": RECIPE_RDFA.format(image='<img property="image" src="/stew.jpg">'),
    "/clean/breadcrumb-rdfa": BREADCRUMB_RDFA,
    "/clean/plain": "<p>No structured data here; typeof x === 'y' in prose.</p>",
    "/bad/unknown-type-microdata": ARTICLE_MICRODATA.replace("NewsArticle", "NewsArticel"),
    "/bad/missing-required-rdfa": RECIPE_RDFA.format(image=""),
}
HEADS: dict[str, str] = {
    "/clean/product": _ld(ORGANIZATION, PRODUCT),
    "/clean/faq-breadcrumbs": _ld(FAQ, BREADCRUMBS),
    "/clean/video-event": _ld([VIDEO, EVENT_JSONLD]),
    "/clean/other-vocabulary": _ld(OTHER_VOCABULARY),
    "/bad/invalid-json": '<script type="application/ld+json">{"@type": "Thing",}</script>',
    "/bad/unknown-property-jsonld": _ld({**ORGANIZATION, "colour": "green"}),
    "/bad/missing-recommended-jsonld": _ld({k: v for k, v in VIDEO.items() if k != "embedUrl"}),
}
#: Path -> the one finding it plants: (check, severity).
PLANTED: dict[str, tuple[str, str]] = {
    "/bad/invalid-json": ("structured_data.invalid_json", "error"),
    "/bad/unknown-type-microdata": ("structured_data.unknown_type", "error"),
    "/bad/unknown-property-jsonld": ("structured_data.unknown_property", "warning"),
    "/bad/missing-required-rdfa": ("structured_data.missing_required", "error"),
    "/bad/missing-recommended-jsonld": ("structured_data.missing_recommended", "warning"),
}
PATHS = sorted({*BODIES, *HEADS})


def page(path: str) -> str:
    return (
        f"<!doctype html><html lang='en'><head><title>{path}</title>{HEADS.get(path, '')}"
        f"</head><body><main>{BODIES.get(path, '<p>Text.</p>')}</main></body></html>"
    )


def structured_app() -> web.Application:
    """``/`` links to every page of :data:`PATHS`."""
    index = "".join(f'<a href="{path}">{path}</a>' for path in PATHS)

    async def home(request: web.Request) -> web.Response:
        return web.Response(text=f"<html><body>{index}</body></html>", content_type="text/html")

    async def one(request: web.Request) -> web.Response:
        path = request.path
        if path not in HEADS and path not in BODIES:
            raise web.HTTPNotFound()
        return web.Response(text=page(path), content_type="text/html")

    app = web.Application()
    app.router.add_get("/", home)
    app.router.add_get("/{kind}/{name}", one)
    return app
