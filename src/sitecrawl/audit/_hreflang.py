"""hreflang checks over a finished crawl's pages (their ``<link rel="alternate" hreflang>``
pairs, :attr:`~sitecrawl.Page.hreflang`). Pure, no I/O; run after the crawl, from the store.

Each finding is ``(check, page URL, message, detail)``; :mod:`sitecrawl.audit._issues` makes it
an issues row. Language and region codes are checked against ISO 639-1 and ISO 3166-1 lists
shipped in the package (``audit/data``); a script subtag (``zh-Hant-TW``) is allowed.
An alternate the crawl did not fetch (outside its scope or limits) is not judged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any

from .._models import Page
from ._checks import Finding
from ._findings import page_key
from ._rows import is_html, succeeded

X_DEFAULT = "x-default"
_CODE = re.compile(r"([A-Za-z]{2})(?:-([A-Za-z]{4}))?(?:-([A-Za-z]{2}))?")


@cache
def _codes(name: str) -> frozenset[str]:
    text = files(__package__).joinpath("data", name).read_text(encoding="utf-8")
    lines = (line for line in text.splitlines() if not line.startswith("#"))
    return frozenset(code.lower() for line in lines for code in line.split())


def languages() -> frozenset[str]:
    """The ISO 639-1 language codes (lower case)."""
    return _codes("iso639-1.txt")


def regions() -> frozenset[str]:
    """The ISO 3166-1 alpha-2 region codes (lower case)."""
    return _codes("iso3166-1.txt")


@lru_cache(maxsize=4096)  # a site uses a few dozen values, on every page
def code_problem(value: str) -> str | None:
    """Why ``value`` is not a valid hreflang value, or None when it is (``x-default``, a
    language, a language and region, either with a script)."""
    if value.lower() == X_DEFAULT:
        return None
    match = _CODE.fullmatch(value)
    if match is None:
        return "not language(-script)(-region)"
    lang, _, region = match.groups()
    if lang.lower() not in languages():
        return f"{lang!r} is no ISO 639-1 language"
    if region is not None and region.lower() not in regions():
        return f"{region!r} is no ISO 3166-1 region"
    return None


def own_url(page: Page) -> str:
    """The URL a page's document answered at (where a redirect ended)."""
    return page.final_url or page.url


def canonical_elsewhere(page: Page) -> str | None:
    """The page's canonical URL when it names another page, else None."""
    if page.canonical and page_key(page.canonical) != page_key(own_url(page)):
        return page.canonical
    return None


def documents(pages: Sequence[Page]) -> list[Page]:
    """Successful HTML pages, one per document (a URL that redirected to a page crawled in
    its own right is left out: that page speaks for it)."""
    direct = {page_key(p.url) for p in pages if not p.redirects}
    return [
        p
        for p in pages
        if succeeded(p) and is_html(p) and (not p.redirects or page_key(own_url(p)) not in direct)
    ]


def hreflang_findings(pages: Sequence[Page]) -> Iterator[Finding]:
    """Every hreflang finding of a crawl, page by page."""
    by_key: dict[str, Page] = {}  # crawled URLs, then the URLs redirects ended on
    for page in pages:
        by_key.setdefault(page_key(page.url), page)
    for page in pages:
        if page.redirects and page.final_url:
            by_key.setdefault(page_key(page.final_url), page)
    for page in documents(pages):
        if page.hreflang:
            yield from _page_findings(page, by_key)


def _page_findings(page: Page, by_key: Mapping[str, Page]) -> Iterator[Finding]:
    url = own_url(page)
    key = page_key(url)
    # hreflang (lower case) -> target key -> (hreflang as written, target URL)
    targets: dict[str, dict[str, tuple[str, str]]] = {}
    for lang, href in page.hreflang:
        if (why := code_problem(lang)) is not None:
            yield (
                "hreflang.invalid_code",
                url,
                f"hreflang {lang!r} is invalid: {why}",
                {"hreflang": lang, "href": href, "reason": why},
            )
        targets.setdefault(lang.lower(), {}).setdefault(page_key(href), (lang, href))
    for found in targets.values():
        if len(found) > 1:
            lang = next(iter(found.values()))[0]
            yield (
                "hreflang.conflict",
                url,
                f"hreflang {lang!r} points at {len(found)} different URLs",
                {"hreflang": lang, "urls": [href for _, href in found.values()]},
            )
    if not any(key in found for found in targets.values()):
        yield ("hreflang.no_self_reference", url, "the page's hreflang omits the page itself", {})
    if X_DEFAULT not in targets:
        yield ("hreflang.no_x_default", url, "the page's hreflang has no x-default", {})
    seen = {key}
    for found in targets.values():
        for target_key, (lang, href) in found.items():
            if target_key in seen or (target := by_key.get(target_key)) is None:
                continue
            seen.add(target_key)
            redirected = bool(target.redirects) and page_key(own_url(target)) != target_key
            yield from _target_findings(url, key, lang, href, target, redirected)


def _target_findings(
    url: str, key: str, lang: str, href: str, target: Page, redirected: bool
) -> Iterator[Finding]:
    """The findings of one alternate: ``target`` is its record (``redirected``: the
    alternate's URL redirected; else the record is where it answered)."""
    detail: dict[str, Any] = {"hreflang": lang, "href": href}
    if redirected or target.status != 200 or target.error is not None:
        status = target.redirects[0][1] if redirected else target.status
        yield (
            "hreflang.target_not_200",
            url,
            f"alternate {href} answers {status or target.error_kind or 'nothing'}",
            {**detail, "status": status, "error_kind": target.error_kind},
        )
        return
    if target.indexable is False:
        yield ("hreflang.target_noindex", url, f"alternate {href} is noindex", detail)
    if (canonical := canonical_elsewhere(target)) is not None:
        yield (
            "hreflang.target_canonicalised",
            url,
            f"alternate {href} has canonical {canonical}",
            {**detail, "canonical": canonical},
        )
    if is_html(target) and not any(page_key(back) == key for _, back in target.hreflang):
        yield (
            "hreflang.no_return",
            url,
            f"alternate {href} ({lang}) does not link back with hreflang",
            detail,
        )
