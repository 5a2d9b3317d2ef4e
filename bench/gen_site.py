#!/usr/bin/env python3
"""Generate a deterministic synthetic static site for crawler benchmarks.

Layout: the root page is ``/index.html`` (always linked as ``/``); page ``i``
(1 <= i < N) lives at ``/s{i // 250}/g{(i // 25) % 10}/page-{i}.html``.  Every
page links to ``i + 1`` (so all N pages are reachable from ``/``) plus random
pages, using relative, root-relative and absolute (``--base``) hrefs, a few
out-of-scope external links, a ``mailto:`` and ``#fragment`` links.  Nothing
ever links to ``/index.html`` itself, so a full crawl from ``/`` finds exactly
N distinct pages.

Besides the HTML the generator writes ``urls.txt`` (every page URL, absolute)
and ``site-meta.json`` (pages, base, seed), both unlinked from the pages.

    python bench/gen_site.py --pages 5000 --base http://127.0.0.1:8088
"""

from __future__ import annotations

import argparse
import html
import json
import posixpath
import random
import shutil
import sys
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent / "site"
META_FILE = "site-meta.json"
URLS_FILE = "urls.txt"

LOREM = """
lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut
labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris
nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse
cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui
officia deserunt mollit anim id est laborum crawler async queue socket parser frontier latency
throughput request response header payload cache index archive network protocol buffer stream
scheduler worker domain robots sitemap anchor canonical metadata encoding charset garden river
mountain harbor lantern meadow orchard compass journey library window ceramic velvet copper
marble timber granite silver amber cobalt
"""
WORDS = LOREM.split()

SECTION_PAGES = 250  # pages per /s{k}/ directory
GROUP_PAGES = 25  # pages per /s{k}/g{m}/ sub-directory


def page_path(i: int) -> str:
    """URL path of page ``i``; the root page is addressed as ``/``."""
    if i == 0:
        return "/"
    return f"/s{i // SECTION_PAGES}/g{(i // GROUP_PAGES) % 10}/page-{i}.html"


def file_path(i: int) -> str:
    """Site-relative file path of page ``i``."""
    return "index.html" if i == 0 else page_path(i).lstrip("/")


class PageWriter:
    """Builds the HTML of one page from a per-page seeded RNG."""

    def __init__(self, i: int, n: int, base: str, seed: int, structured_data: bool = False) -> None:
        self.i = i
        self.structured_data = structured_data
        self.n = n
        self.base = base
        self.rng = random.Random(seed * 1_000_003 + i)
        self.path = page_path(i)
        self.dir = posixpath.dirname(self.path)

    # -- text helpers -----------------------------------------------------
    def words(self, lo: int, hi: int) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(lo, hi)))

    def sentence(self) -> str:
        s = self.words(8, 18)
        if self.rng.random() < 0.1:
            s += " &amp; " + self.words(2, 5)
        return s[0].upper() + s[1:] + "."

    def paragraph(self, links: list[str]) -> str:
        parts = [self.sentence() for _ in range(self.rng.randint(3, 7))]
        for link in links:
            parts.insert(self.rng.randrange(len(parts) + 1), link)
        if self.rng.random() < 0.3:
            parts.insert(self.rng.randrange(len(parts) + 1), f"<em>{self.words(2, 4)}</em>")
        return "<p>" + " ".join(parts) + "</p>\n"

    # -- link helpers -----------------------------------------------------
    def href(self, target: int, form: str | None = None) -> str:
        """Href to page ``target`` in a relative, root-relative or absolute form."""
        form = form or self.rng.choices(("rel", "root", "abs"), weights=(4, 3, 3))[0]
        path = page_path(target)
        if form == "abs":
            return self.base + path
        if form == "root" or (target == 0 and self.i == 0):
            return path
        if target == 0:
            return posixpath.relpath("/", self.dir) + "/"  # "../../"
        rel = posixpath.relpath(path, self.dir)
        return "./" + rel if "/" not in rel and self.rng.random() < 0.2 else rel

    def random_page(self) -> int:
        return self.rng.randrange(self.n)

    def anchor(self, target: int, form: str | None = None, suffix: str = "") -> str:
        text = self.words(1, 4)
        return f'<a href="{self.href(target, form)}{suffix}">{text}</a>'

    def asset(self, kind: str, name: str) -> str:
        """Asset URL (never crawled) in a random form."""
        path = f"/static/{kind}/{name}"
        form = self.rng.choice(("rel", "root", "abs"))
        if form == "abs":
            return self.base + path
        if form == "root":
            return path
        return posixpath.relpath(path, self.dir)

    def json_ld(self, title: str, description: str) -> str:
        """An Article and its BreadcrumbList as JSON-LD (``--structured-data``)."""
        url = self.base + self.path
        article = {
            "@context": "https://schema.org",
            "@type": "Article",
            "headline": html.unescape(title),
            "description": html.unescape(description),
            "image": [f"{self.base}/static/img/photo-{self.i % 500}.jpg"],
            "datePublished": f"2024-0{1 + self.i % 9}-1{self.i % 10}T08:00:00+00:00",
            "author": {"@type": "Person", "name": self.words(2, 2).title(), "url": self.base},
            "publisher": {"@type": "Organization", "name": "Synthetic Bench Site"},
            "mainEntityOfPage": url,
        }
        crumbs = {
            "@context": "https://schema.org",
            "@type": "BreadcrumbList",
            "itemListElement": [
                {"@type": "ListItem", "position": 1, "name": "Home", "item": self.base + "/"},
                {"@type": "ListItem", "position": 2, "name": "Page", "item": url},
            ],
        }
        return "".join(
            f'<script type="application/ld+json">{json.dumps(data)}</script>\n'
            for data in (article, crumbs)
        )

    # -- page -------------------------------------------------------------
    def render(self) -> str:
        rng = self.rng
        i, n = self.i, self.n
        topic = self.words(2, 4).title()
        structured_data = self.structured_data
        title = (
            "Home - Synthetic Bench Site"
            if i == 0
            else f"{topic} (page {i}) - Synthetic Bench Site"
        )
        h1 = "Welcome to the synthetic bench site" if i == 0 else f"{topic} &mdash; page {i}"
        description = self.sentence()

        head = (
            "<!doctype html>\n"
            '<html lang="en">\n<head>\n'
            '<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{title}</title>\n"
            f'<meta name="description" content="{html.escape(html.unescape(description))}">\n'
            f'<link rel="canonical" href="{self.base}{self.path}">\n'
            f'<link rel="stylesheet" href="{self.asset("css", "site.css")}">\n'
            f'<link rel="stylesheet" href="{self.asset("css", f"theme-{i % 7}.css")}">\n'
            f'<link rel="icon" href="/favicon.ico">\n'
            f'<script src="{self.asset("js", "app.js")}" defer></script>\n'
            f'<script>window.dataLayer = [{{"page": {i}}}];</script>\n'
            + (self.json_ld(title, description) if structured_data else "")
            + "</head>\n"
        )

        # Header: tagline <p> outside <main> (first-paragraph extraction must skip it).
        sections = max(1, (n - 1) // SECTION_PAGES + 1)
        nav = [f'<li><a href="{self.href(0, rng.choice(("root", "abs")))}">Home</a></li>']
        for _ in range(7):
            first = min(n - 1, rng.randrange(sections) * SECTION_PAGES + 1)
            label = f"Section {first // SECTION_PAGES}"
            nav.append(f'<li><a href="{self.href(first, "root")}">{label}</a></li>')
        header = (
            '<body>\n<a id="top"></a>\n<header class="site-header">\n'
            f'<p class="tagline">{self.sentence()}</p>\n'
            '<nav aria-label="main"><ul>' + "".join(nav) + "</ul></nav>\n</header>\n"
        )

        # Main content: breadcrumb, h1, TOC, sections of paragraphs with inline links.
        crumbs = f'<a href="{self.href(0)}">Home</a>'
        if i:
            crumbs += f' &rsaquo; <a href="{self.href(max(1, i - i % GROUP_PAGES))}">Group</a>'
        inline = [self.anchor(self.random_page()) for _ in range(12)]
        inline.append(self.anchor(self.random_page(), "rel", "#comments"))
        target_size = rng.randint(20_000, 30_000) - 2_500  # leave room for the footer
        body = [
            '<main id="content">\n',
            f'<nav class="breadcrumb">{crumbs}</nav>\n',
            f"<h1>{h1}</h1>\n",
            '<nav class="toc"><a href="#section-2">Jump to section 2</a></nav>\n',
        ]
        size = len(head) + len(header) + sum(map(len, body))
        section = 0
        while size < target_size:
            section += 1
            block = [f'<h2 id="section-{section}">{self.words(2, 6).capitalize()}</h2>\n']
            for _ in range(rng.randint(2, 4)):
                take = [inline.pop() for _ in range(min(len(inline), rng.randint(0, 2)))]
                block.append(self.paragraph(take))
            if section % 3 == 0:
                alt = html.escape(self.words(2, 5))
                src = self.asset("img", f"photo-{rng.randrange(500)}.jpg")
                img = f'<img src="{src}" alt="{alt}" width="640" height="360" loading="lazy">'
                block.append(f"<figure>{img}</figure>\n")
            chunk = "".join(block)
            body.append(chunk)
            size += len(chunk)

        related = inline + [self.anchor(self.random_page()) for _ in range(10)]
        body.append('<aside class="related"><h2>Related pages</h2><ul>\n')
        body.extend(f"<li>{a}</li>\n" for a in related)
        body.append("</ul></aside>\n")
        pager = [
            f'<a rel="next" href="{self.href(j)}">Next {j}</a>' for j in (i + 1, i + 2) if j < n
        ]
        if i:
            pager.insert(0, f'<a rel="prev" href="{self.href(i - 1)}">Previous</a>')
        body.append('<nav class="pager">' + " | ".join(pager) + "</nav>\n</main>\n")

        footer_links = [self.anchor(self.random_page(), "abs") for _ in range(3)]
        footer_links += [
            f'<a href="https://example.org/{rng.choice(WORDS)}/{rng.randrange(1000)}">Partner</a>',
            '<a href="https://example.org/">Example</a>',
            f'<a href="https://www.example.org/about?ref=p{i}">About example</a>',
            '<a href="mailto:webmaster@example.org">Contact</a>',
            '<a href="#top">Back to top</a>',
        ]
        logo = self.asset("img", "logo.png")
        # With --structured-data, one page in five marks its footer up as a Microdata item.
        microdata = structured_data and i % 5 == 0
        footer = (
            '<footer class="site-footer"'
            + (' itemscope itemtype="https://schema.org/Organization">\n' if microdata else ">\n")
            + ('<meta itemprop="name" content="Synthetic Bench Site">\n' if microdata else "")
            + f'<img src="{logo}" alt="Synthetic logo" width="120" height="40"'
            + (' itemprop="logo">\n' if microdata else ">\n")
            + "<ul>"
            + "".join(f"<li>{a}</li>" for a in footer_links)
            + "</ul>\n"
            f"<p>&copy; 2024 Synthetic Bench Site. {self.sentence()}</p>\n"
            "</footer>\n</body>\n</html>\n"
        )
        return head + header + "".join(body) + footer


def prepare_out_dir(out: Path) -> None:
    """Empty ``out`` if it is a previously generated site; refuse other non-empty dirs."""
    if out.exists() and any(out.iterdir()):
        if not (out / META_FILE).exists():
            sys.exit(f"refusing to overwrite non-empty {out} (no {META_FILE} marker)")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=5000, help="number of pages (default 5000)")
    ap.add_argument("--seed", type=int, default=1, help="RNG seed (default 1)")
    ap.add_argument(
        "--structured-data",
        action="store_true",
        help="JSON-LD (Article, BreadcrumbList) on every page, Microdata on one in five",
    )
    ap.add_argument("--base", default="http://127.0.0.1:8088", help="origin used in absolute links")
    ap.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})"
    )
    args = ap.parse_args()
    if args.pages < 1:
        ap.error("--pages must be >= 1")
    base = args.base.rstrip("/")

    prepare_out_dir(args.out)
    total = 0
    for i in range(args.pages):
        data = PageWriter(i, args.pages, base, args.seed, args.structured_data).render().encode()
        dest = args.out / file_path(i)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        total += len(data)

    urls = [base + page_path(i) for i in range(args.pages)]
    (args.out / URLS_FILE).write_text("\n".join(urls) + "\n")
    meta = {"pages": args.pages, "base": base, "seed": args.seed, "bytes": total}
    (args.out / META_FILE).write_text(json.dumps(meta, indent=2) + "\n")
    avg_kb = total / args.pages / 1e3
    print(f"{args.pages} pages, {total / 1e6:.1f} MB ({avg_kb:.1f} KB/page avg) in {args.out}")


if __name__ == "__main__":
    main()
