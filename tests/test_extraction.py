"""Custom extraction rules (:mod:`sitecrawl.parse._extraction`) against references: Parsel (Scrapy's
selector library) for CSS, XPath and regex, JMESPath on independently parsed JSON-LD."""

from __future__ import annotations

import json
import re
from typing import Any

import jmespath
import pytest
from parsel import Selector
from selectolax.lexbor import LexborHTMLParser

from extraction_site import product_pages
from sitecrawl import ConfigError
from sitecrawl.parse import Extraction, Rule, parse_specs

RULES = {
    "name": "css:h1.name",
    "price_text": "css:.price",
    "price_attr": "css:.price@data-price",
    "tags": "all:css:ul.tags li",
    "tag_count": "count:css:ul.tags li",
    "has_sku": "exists:css:.sku",
    "sku_x": "xpath://div[@class='sku']/text()",
    "name_x": "xpath://h1",
    "tags_x": "all:xpath://ul[@class='tags']/li",
    "count_x": "xpath:count(//ul[@class='tags']/li)",
    "ga": r"regex:gtag\('config', '([^']+)'\)",
    "prices_re": 'all:regex:data-price="([^"]+)"',
    "scripts": "count:regex:<script",
    "ld_price": "jsonld:[?\"@type\"=='Product'].offers.price | [0]",
    "ld_types": 'all:jsonld:[]."@type"',
    "ld_org": "exists:jsonld:[?\"@type\"=='Organization']",
}


TAGS_X = "//ul[@class='tags']/li"


def _clean(text: str) -> str:
    return " ".join(text.split())


def _ld(sel: Selector) -> list[Any]:
    out: list[Any] = []
    for text in sel.xpath('//script[@type="application/ld+json"]/text()').getall():
        try:
            data = json.loads(text)
        except ValueError:
            continue
        stack = [data]
        while stack:
            item = stack.pop(0)
            if isinstance(item, list):
                stack[:0] = item
            elif isinstance(item, dict) and "@graph" in item:
                stack.insert(0, item["@graph"])
            else:
                out.append(item)
    return out


def reference(html: str) -> dict[str, Any]:
    sel = Selector(text=html)

    def text(node: Selector) -> str:
        return _clean("".join(node.xpath(".//text()").getall()))

    first = sel.css("h1.name")
    prices = sel.css(".price")
    attrs = [a.strip() for a in sel.css(".price::attr(data-price)").getall()]
    ga = re.search(r"gtag\('config', '([^']+)'\)", html)
    ld = _ld(sel)
    price = jmespath.search("[?\"@type\"=='Product'].offers.price | [0]", ld) if ld else None
    types = jmespath.search('[]."@type"', ld) if ld else None
    sku = sel.xpath("//div[@class='sku']/text()").get()
    h1 = sel.xpath("//h1")
    return {
        "name": text(first[0]) if first else None,
        "price_text": text(prices[0]) if prices else None,
        "price_attr": attrs[0] if attrs else None,
        "tags": [text(li) for li in sel.css("ul.tags li")],
        "tag_count": len(sel.css("ul.tags li")),
        "has_sku": bool(sel.css(".sku")),
        "sku_x": _clean(sku) if sku is not None else None,
        "name_x": _clean(h1[0].xpath("string()").get()) if h1 else None,
        "tags_x": [
            _clean(li.xpath("string()").get()) for li in sel.xpath("//ul[@class='tags']/li")
        ],
        "count_x": int(float(sel.xpath("count(//ul[@class='tags']/li)").get())),
        "ga": ga.group(1) if ga else None,
        "prices_re": re.findall(r'data-price="([^"]+)"', html),
        "scripts": len(re.findall("<script", html)),
        "ld_price": price,
        "ld_types": types or [],
        "ld_org": bool(jmespath.search("[?\"@type\"=='Organization']", ld)) if ld else False,
    }


def test_every_rule_equals_the_references_on_200_product_pages() -> None:
    extraction = Extraction.from_specs(RULES)
    seen: dict[str, set[str]] = {name: set() for name in RULES}
    for i, html in enumerate(product_pages()):
        got = extraction.run(LexborHTMLParser(html), html, f"http://shop.test/p/{i}").values
        assert got == reference(html), i
        for name, value in got.items():
            seen[name].add(repr(value))
    # The fixture exercises each rule both ways: every rule has several distinct values.
    assert all(len(values) > 1 for values in seen.values()), seen


def test_types_and_when() -> None:
    extraction = Extraction.from_specs(
        {
            "price": {"spec": "css:.price@data-price", "type": "float"},
            "n": {"spec": "count:css:li", "type": "int"},
            "sku": {"spec": "regex:SKU-(\\d+)", "type": "int"},
            "on": {"spec": "exists:css:.sku", "type": "bool"},
            "day": {"spec": "css:time@datetime", "type": "date"},
            "only": {"spec": "css:h1", "when": "/p/1"},
        }
    )
    html = (
        '<h1>T</h1><span class="price" data-price="n/a"></span><li>a</li><div class="sku">'
        'SKU-00042</div><time datetime="2024-03-05T10:00:00Z"></time>'
    )
    found = extraction.run(LexborHTMLParser(html), html, "http://shop.test/p/1")
    assert found.values == {
        "price": None,
        "n": 1,
        "sku": 42,
        "on": True,
        "day": "2024-03-05",
        "only": "T",
    }
    assert found.unconverted == ["price"]
    other = extraction.run(LexborHTMLParser(html), html, "http://shop.test/about")
    assert "only" not in other.values


def test_the_rules_cross_as_json() -> None:
    extraction = Extraction.from_specs({"a": {"spec": "all:css:li", "type": "str", "when": "x"}})
    again = Extraction.from_json(extraction.to_json())
    assert again.rules == extraction.rules


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("css:a[", "'bad'"),
        ("xpath://a[", "'bad'"),
        ("regex:(a", "'bad'"),
        ("jsonld:[?", "'bad'"),
        ("first:css:a", "unknown kind 'first'"),
        ("html:a", "unknown kind 'html'"),
        ("css:", "empty expression"),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_rule(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Rule("bad", spec)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_specs_from_arguments() -> None:
    assert parse_specs(["a=css:b=c"]) == {"a": "css:b=c"}
    with pytest.raises(ConfigError, match="NAME=SPEC"):
        parse_specs(["css:.price"])
    with pytest.raises(ConfigError, match="twice"):
        parse_specs(["a=css:b", "a=css:c"])
