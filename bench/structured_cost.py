#!/usr/bin/env python3
"""What structured-data extraction costs a page, ours against extruct (issue 32).

Times, per page kind, the page's whole parse (``parse_html``, what a crawl does anyway), our
extraction on that parsed tree (``parse._structured``: JSON-LD, Microdata, RDFa), extruct's
``extract`` of the three syntaxes (it parses the page again with lxml; RDFa through rdflib),
and the hybrid the issue suggested (our JSON-LD, extruct's Microdata and RDFa parsers only on a
page with their attributes). The pages: a bench-site page with ``--structured-data``, a plain
one, and three realistic ones built on a bench page's body: a shop's product page (a JSON-LD
``@graph``: Product, Offer, AggregateRating, reviews, BreadcrumbList, Organization, as shop
plugins write it, plus Open Graph tags), a recipe in Microdata and an article in RDFa Lite.
It also counts the items each finds (extruct's when they agree on what a page holds).

    pip install extruct==0.18.0   # only for this comparison; sitecrawl does not use it
    python bench/structured_cost.py --repeat 200
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "src"))
sys.path.insert(0, str(BENCH_DIR))

from gen_site import PageWriter  # noqa: E402

from sitecrawl.parse._extract import parse_html  # noqa: E402
from sitecrawl.parse._structured import structured_data  # noqa: E402

BASE = "http://127.0.0.1:8088"
URL = BASE + "/s0/g0/page-7.html"


def _product_graph() -> str:
    reviews = [
        {
            "@type": "Review",
            "author": {"@type": "Person", "name": f"Buyer {k}"},
            "datePublished": "2024-03-0{k}",
            "reviewBody": "Comfortable, well made and true to size. " * 3,
            "reviewRating": {"@type": "Rating", "ratingValue": 4 + k % 2, "bestRating": 5},
        }
        for k in range(1, 4)
    ]
    graph = {
        "@context": "https://schema.org",
        "@graph": [
            {
                "@type": "Organization",
                "@id": BASE + "/#organization",
                "name": "Example Shop",
                "url": BASE + "/",
                "logo": BASE + "/logo.png",
                "sameAs": ["https://example.org/shop", "https://example.net/shop"],
            },
            {
                "@type": "BreadcrumbList",
                "itemListElement": [
                    {"@type": "ListItem", "position": n, "name": name, "item": BASE + path}
                    for n, (name, path) in enumerate(
                        [("Home", "/"), ("Shoes", "/shoes/"), ("Trail", "/shoes/trail/")], 1
                    )
                ],
            },
            {
                "@type": "Product",
                "name": "Trail Runner 2",
                "image": [BASE + f"/img/tr2-{k}.jpg" for k in range(4)],
                "description": "A light trail shoe with a grippy sole. " * 4,
                "sku": "TR2-42",
                "gtin13": "0012345678905",
                "brand": {"@type": "Brand", "name": "Example"},
                "offers": {
                    "@type": "Offer",
                    "url": URL,
                    "priceCurrency": "EUR",
                    "price": "89.90",
                    "priceValidUntil": "2025-12-31",
                    "availability": "https://schema.org/InStock",
                    "itemCondition": "https://schema.org/NewCondition",
                    "seller": {"@id": BASE + "/#organization"},
                },
                "aggregateRating": {
                    "@type": "AggregateRating",
                    "ratingValue": 4.6,
                    "reviewCount": 87,
                },
                "review": reviews,
            },
        ],
    }
    og = "".join(
        f'<meta property="og:{k}" content="{v}">\n'
        for k, v in (("type", "product"), ("title", "Trail Runner 2"), ("url", URL))
    )
    return og + f'<script type="application/ld+json">{json.dumps(graph)}</script>\n'


def _recipe_microdata() -> str:
    ingredients = "".join(
        f'<li itemprop="recipeIngredient">{k + 1} cup of ingredient {k}</li>' for k in range(15)
    )
    steps = "".join(
        f'<li itemprop="recipeInstructions" itemscope itemtype="https://schema.org/HowToStep">'
        f'<span itemprop="text">Step {k}: stir the pot for a while, then taste.</span></li>'
        for k in range(8)
    )
    return (
        '<div itemscope itemtype="https://schema.org/Recipe">'
        '<h2 itemprop="name">Bean stew</h2><img itemprop="image" src="/img/stew.jpg" alt="">'
        '<span itemprop="author" itemscope itemtype="https://schema.org/Person">'
        '<span itemprop="name">Ann Cook</span></span>'
        '<time itemprop="prepTime" datetime="PT15M">15 min</time>'
        '<time itemprop="cookTime" datetime="PT1H">1 h</time>'
        '<meta itemprop="recipeYield" content="4">'
        '<div itemprop="nutrition" itemscope itemtype="https://schema.org/NutritionInformation">'
        '<span itemprop="calories">420 kcal</span></div>'
        '<div itemprop="aggregateRating" itemscope itemtype="https://schema.org/AggregateRating">'
        '<meta itemprop="ratingValue" content="4.8"><meta itemprop="ratingCount" content="31">'
        f"</div><ul>{ingredients}</ul><ol>{steps}</ol></div>\n"
    )


def _article_rdfa() -> str:
    return (
        '<article vocab="https://schema.org/" typeof="Article">'
        '<h2 property="headline">How trails are built</h2>'
        '<img property="image" src="/img/trail.jpg" alt="">'
        '<span property="author" typeof="Person"><a property="url" href="/ann">'
        '<span property="name">Ann Writer</span></a></span>'
        '<time property="datePublished" datetime="2024-04-01">1 April</time>'
        '<div property="publisher" typeof="Organization"><span property="name">Trail News'
        '</span></div><p property="articleBody">Trails are built by hand. ' * 1 + "</p></article>\n"
    )


def pages() -> dict[str, str]:
    """Page kind -> HTML."""
    plain = PageWriter(7, 5000, BASE, 1).render()
    bench = PageWriter(7, 5000, BASE, 1, structured_data=True).render()
    bench_md = PageWriter(10, 5000, BASE, 1, structured_data=True).render()

    def into_main(markup: str, head: str = "") -> str:
        return plain.replace("</head>", head + "</head>", 1).replace(
            '<main id="content">\n', '<main id="content">\n' + markup, 1
        )

    return {
        "plain": plain,
        "bench (JSON-LD)": bench,
        "bench (JSON-LD + Microdata)": bench_md,
        "product (JSON-LD graph, OG)": into_main("", _product_graph()),
        "recipe (Microdata)": into_main(_recipe_microdata()),
        "article (RDFa Lite)": into_main(_article_rdfa()),
    }


def best(fn: Callable[[], object], repeat: int) -> float:
    """The lowest of ``repeat`` timings, in microseconds (on a shared machine the lowest is
    the one least disturbed; the median moved by 2x between runs)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    try:
        import extruct
        from extruct.rdfa import RDFaExtractor
        from extruct.w3cmicrodata import MicrodataExtractor
    except ImportError:
        sys.exit("pip install extruct==0.18.0 (only for this comparison)")
    syntaxes = ["json-ld", "microdata", "rdfa"]
    microdata, rdfa = MicrodataExtractor(), RDFaExtractor()

    def hybrid(html: str) -> None:
        tree = LexborHTMLParser(html)
        structured_data(tree, URL)  # (its JSON-LD; the rest below is extruct's)
        if tree.css_first("[itemscope]") is not None:
            microdata.extract(html, base_url=URL)
        if tree.css_first("[typeof]") is not None:
            rdfa.extract(html, base_url=URL)

    print(
        f"{'page':<30} {'KB':>4} {'parse':>7} {'ours':>6} {'ours %':>6} {'extruct':>8}"
        f" {'x parse':>7} {'hybrid':>7} items ours/extruct"
    )
    for name, html in pages().items():
        parse = best(lambda html=html: parse_html(html, URL), args.repeat)
        tree = LexborHTMLParser(html)
        ours = best(lambda html=html, tree=tree: structured_data(tree, URL), args.repeat)
        theirs = best(
            lambda html=html: extruct.extract(html, base_url=URL, syntaxes=syntaxes, uniform=True),
            max(args.repeat // 4, 5),
        )
        mixed = best(lambda html=html: hybrid(html), max(args.repeat // 4, 5)) - parse
        ours_items = structured_data(tree, URL)
        extracted = extruct.extract(html, base_url=URL, syntaxes=syntaxes, uniform=True)
        their_items = sum(
            len(extracted[k][0].get("@graph", [])) or len(extracted[k])
            if k == "json-ld" and extracted[k]
            else len(extracted[k])
            for k in syntaxes
        )
        # Microdata: ours and extruct's (uniform: @type, then the properties) the same?
        ours_md = [
            {"@type": item["type"], **item["properties"]}
            for item in ours_items
            if item["format"] == "microdata"
        ]
        theirs_md = [
            {k: v for k, v in item.items() if k != "@context"} for item in extracted["microdata"]
        ]
        same = "" if not theirs_md else " same" if ours_md == theirs_md else " DIFFERENT"
        print(
            f"{name:<30} {len(html) / 1e3:>4.0f} {parse:>7.0f} {ours:>6.0f}"
            f" {ours / parse * 100:>5.1f}% {theirs:>8.0f} {theirs / parse:>6.1f}x"
            f" {max(mixed, 0):>7.0f} {len(ours_items)}/{their_items}{same}"
        )
    print("times: microseconds per page, the lowest of the runs; 'hybrid' is beyond the parse;")
    print("'same': our Microdata items equal extruct's (uniform=True, less @context)")


if __name__ == "__main__":
    main()
