"""A small blog for the Markdown crawl tests: articles inside a real site's boilerplate
(navigation, cookie banner, sidebar, share bar, ad, footer), with relative links, an image, a
code block, a table and a quote; ``ETag``s (a re-crawl gets ``304``s); an article's text can
be edited between two crawls; ``/app.html`` writes its article with JavaScript."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from aiohttp import web

ARTICLES = 3
#: Words of every article that are main content, and of the boilerplate that is not.
CONTENT_WORDS = "lighthouse keepers logged every passing ship"
BOILERPLATE = ("Accept all cookies", "Buy the Widget Pro", "All rights reserved", "Sidebar:")
APP_WORDS = "written by the application script"


def article(n: int, edited: bool = False) -> str:
    change = "A correction was added after the first crawl. " if edited else ""
    prose = (
        f"Article {n}: the {CONTENT_WORDS} in a ledger that the harbour office kept for a "
        "hundred years, and the ledger now lives in the town library where anyone may read it."
    )
    return f"""<h1>Harbour ledger {n}</h1>
<p>{change}{prose}</p>
<p>{prose} The pages are fragile, so the library scanned them; see
<a href="scans.html">the scans</a> and <a href="../about.html">about us</a>.</p>
<figure><img src="img/ledger-{n}.jpg" alt="A page of the ledger"></figure>
<h2>Reading the entries</h2>
<pre><code class="language-python">for entry in ledger:
    print(entry.ship, entry.date)</code></pre>
<table><tr><th>Ship</th><th>Year</th></tr><tr><td>Aurora</td><td>1901</td></tr>
<tr><td>Borealis</td><td>1902</td></tr></table>
<blockquote><p>Every ship that passed was written down, in every weather.</p></blockquote>
<p>{prose} The entries stop in 1950, when radio made the ledger unnecessary.</p>"""


def page(main: str, *, title: str, script: str = "") -> str:
    return f"""<!doctype html>
<html lang="en"><head><title>{title}</title></head><body>
<header><a href="/">Harbour blog</a>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/blog/">Blog</a></li>
  <li><a href="/about.html">About</a></li></ul></nav></header>
<div id="cookie-banner" class="cookie-consent">We use cookies.
  <button>Accept all cookies</button></div>
<aside class="sidebar"><h3>Elsewhere</h3><ul>
  <li><a href="/blog/post-1.html">Sidebar: the first post</a></li></ul></aside>
<main><article id="article">{main}</article></main>
<div class="share-buttons social-share">Share: <a href="https://x.example/share">X</a></div>
<div class="ad advertisement">Buy the Widget Pro now with 20% off</div>
<footer><p>Copyright 2026 Harbour. All rights reserved.</p></footer>{script}
</body></html>"""


APP_SCRIPT = f"""<script>
document.getElementById("article").innerHTML = "<h1>Application ledger</h1>" +
  "<p>This article is {APP_WORDS}, after the page loaded, so only a rendering crawler " +
  "sees it; the raw HTML holds an empty article element and nothing else of note.</p>" +
  "<p>The second paragraph of the article is {APP_WORDS} too, to make it long enough " +
  "to be the main content of the page rather than a fragment of its boilerplate.</p>";
</script>"""


@dataclass
class Blog:
    """The site; ``edited`` article numbers have another text (and ETag)."""

    edited: set[int] = field(default_factory=set)
    not_modified: list[str] = field(default_factory=list)

    def body(self, path: str) -> str | None:
        if path == "/":
            links = "".join(
                f'<li><a href="/blog/post-{n}.html">Post {n}</a></li>'
                for n in range(1, ARTICLES + 1)
            )
            return page(f"<h1>Harbour blog</h1><ul>{links}</ul>", title="Home")
        if path.startswith("/blog/post-") and path.endswith(".html"):
            n = int(path.removeprefix("/blog/post-").removesuffix(".html"))
            if 1 <= n <= ARTICLES:
                return page(article(n, n in self.edited), title=f"Ledger {n}")
        if path == "/app.html":
            return page("", title="Application", script=APP_SCRIPT)
        return None

    def app(self) -> web.Application:
        async def handle(request: web.Request) -> web.Response:
            text = self.body(request.path)
            if text is None:
                raise web.HTTPNotFound()
            etag = '"' + hashlib.sha1(text.encode()).hexdigest() + '"'
            if request.headers.get("If-None-Match") == etag:
                self.not_modified.append(request.path)
                return web.Response(status=304, headers={"ETag": etag})
            return web.Response(text=text, content_type="text/html", headers={"ETag": etag})

        app = web.Application()
        app.router.add_get("/{tail:.*}", handle)
        return app
