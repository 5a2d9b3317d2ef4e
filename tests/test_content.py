"""page_markdown: a page's main (or whole) content as GitHub-flavoured Markdown, pure.

Each page is an article inside the boilerplate of a real site (navigation, cookie banner,
sidebar, share bar, footer). The tests named after a fix hold what the libraries alone get
wrong: trafilatura 2.3.1's Markdown (``extract(output_format="markdown", url=...)``) resolves
``api.html`` on ``/docs/guide.html`` to ``/api.html``, drops code languages, flattens quotes,
indents a nested list 2 spaces under ``1.`` (CommonMark then reads it as a new list) and turns
a one-line ``<pre>`` into inline code; its HTML output turns ``<ol>`` into ``<ul>``.
"""

from __future__ import annotations

import importlib.abc
import re
import sys

import pytest
from lxml import html as lxml_html

import sitecrawl.parse
from sitecrawl import extract_page_data
from sitecrawl._exceptions import ConfigError, MissingExtra, SitecrawlError
from sitecrawl.parse import _content_tree
from sitecrawl.parse._content import page_markdown
from sitecrawl.parse._content_boiler import is_boilerplate
from sitecrawl.parse._content_fast import semantic_main
from sitecrawl.parse._content_shape import join_split_body, plain_body_names

URL = "https://example.org/docs/guide.html"

PROSE = (
    "The widget reads its settings once at start-up and keeps them for the whole run, so a "
    "change to the file needs a restart before it is seen by the running process."
)


def page(article: str, *, head: str = "") -> str:
    """``article`` inside a site's boilerplate, with enough prose around it to be the page's
    main content."""
    return f"""<!doctype html>
<html><head><title>Guide</title>{head}</head><body>
<header><a href="/">Example</a>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/docs/">Docs</a></li>
  <li><a href="/blog/">Blog</a></li><li><a href="/pricing">Pricing</a></li></ul></nav></header>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
  <button>Accept all cookies</button></div>
<div class="wrapper">
<aside class="sidebar"><h3>In this section</h3><ul>
  <li><a href="install.html">Sidebar: installing</a></li>
  <li><a href="upgrade.html">Sidebar: upgrading</a></li></ul></aside>
<main><article>
<h1>Configuring the widget</h1>
<p>{PROSE}</p>
{article}
<p>{PROSE} Every option has a default, listed in the reference, and most runs need none.</p>
</article></main>
</div>
<div class="share-buttons social-share">Share this page: <a href="https://x.example/share">X</a>
  <a href="https://fb.example/share">Facebook</a></div>
<div class="ad advertisement">Buy the Widget Pro now with 20% off</div>
<footer><p>Copyright 2026 Example Inc. All rights reserved.</p>
  <a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a></footer>
</body></html>"""


@pytest.fixture(autouse=True, params=["fast path", "trafilatura"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every case twice: as it comes (most of these pages are semantic: one ``<main>`` of
    content elements, the fast path) and with the fast path off (trafilatura chooses)."""
    if request.param == "trafilatura":
        monkeypatch.setattr(_content_tree, "semantic_main", lambda tree: None)
    return str(request.param)


def lines(markdown: str) -> list[str]:
    return markdown.splitlines()


# -- main content: what stays, what goes ----------------------------------------------------


def test_main_scope_keeps_the_article_and_drops_the_boilerplate() -> None:
    md = page_markdown(page(f"<p>{PROSE}</p>"), URL)
    assert md.startswith("# Configuring the widget\n")
    assert "a change to the file needs a restart" in md
    for boilerplate in (
        "Pricing",
        "cookies",
        "Sidebar",
        "Share this page",
        "Widget Pro",
        "Copyright",
        "Privacy",
    ):
        assert boilerplate not in md, boilerplate


def test_full_scope_keeps_the_whole_body_without_scripts_and_styles() -> None:
    html = page(
        "<p>Visible text.</p><script>var secret = 1;</script>",
        head="<style>body { color: red }</style><script>track()</script>",
    )
    md = page_markdown(html, URL, scope="full")
    for kept in ("Pricing", "cookies", "Sidebar: installing", "Copyright", "Visible text."):
        assert kept in md, kept
    for dropped in ("secret", "track()", "color: red"):
        assert dropped not in md, dropped


def test_headings_lists_and_inline_formatting() -> None:
    md = page_markdown(
        page(
            "<h2>Steps</h2><ul><li>Install the <strong>package</strong></li>"
            "<li>Run <code>widget --check</code> in <em>your</em> project</li></ul>"
        ),
        URL,
    )
    assert "## Steps" in lines(md)
    assert "- Install the **package**" in lines(md)
    assert "- Run `widget --check` in *your* project" in lines(md)


def test_fix_ordered_lists_stay_ordered_and_nest_under_their_marker() -> None:
    """trafilatura's Markdown indents the sub-list 2 spaces: under ``2.`` (3 wide) CommonMark
    makes that a new top-level list."""
    md = page_markdown(
        page(
            "<ol><li>Download the archive from the site</li><li>Configure it:<ul>"
            "<li>set the path</li><li>set the mode</li></ul></li>"
            "<li>Run it and read the output</li></ol>"
        ),
        URL,
    )
    assert "1. Download the archive from the site" in lines(md)
    assert "2. Configure it:" in lines(md)
    assert "   - set the path" in lines(md)
    assert "3. Run it and read the output" in lines(md)


def test_gfm_table_with_its_header_row() -> None:
    md = page_markdown(
        page(
            "<table><thead><tr><th>Option</th><th>Default</th></tr></thead><tbody>"
            "<tr><td>path</td><td>/usr/local</td></tr><tr><td>mode</td><td>fast</td></tr>"
            "</tbody></table>"
        ),
        URL,
    )
    rows = [line for line in lines(md) if line.startswith("|")]
    assert [re.sub(r"\s+", " ", row) for row in rows] == [
        "| Option | Default |",
        rows[1],
        "| path | /usr/local |",
        "| mode | fast |",
    ]
    assert re.fullmatch(r"\| -+ \| -+ \|", rows[1])


def test_fix_blockquotes_are_quoted_not_flattened() -> None:
    md = page_markdown(
        page(
            "<blockquote><p>The first thing a user said about the widget, quoted.</p>"
            "<p>A second paragraph of the same quote.</p></blockquote>"
        ),
        URL,
    )
    assert "> The first thing a user said about the widget, quoted." in lines(md)
    assert "> A second paragraph of the same quote." in lines(md)
    at = lines(md).index("> The first thing a user said about the widget, quoted.")
    assert lines(md)[at + 1] == ">"  # one quote of two paragraphs


# -- code -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("block", "language"),
    [
        ('<pre><code class="language-python">def main():\n    return 1\n</code></pre>', "python"),
        ('<pre class="lang-js"><code>const x = f(1);\nlog(x);</code></pre>', "js"),
        ('<div class="highlight-bash"><pre>echo hi | grep h\nls -l</pre></div>', "bash"),
        (
            '<div class="highlight highlight-source-rust"><pre>fn main() {}\nmain();</pre></div>',
            "rust",
        ),
        (  # Jekyll's Rouge: the language two levels up
            '<div class="language-ruby highlighter-rouge"><div class="highlight">'
            '<pre class="highlight"><code>puts 1\nputs 2</code></pre></div></div>',
            "ruby",
        ),
        ('<pre data-lang="go"><code>func main() {}\nmain()</code></pre>', "go"),
    ],
)
def test_fix_code_blocks_are_fenced_with_their_language(block: str, language: str) -> None:
    md = page_markdown(page(block), URL)
    assert f"```{language}" in lines(md)


def test_fix_code_block_text_is_kept_verbatim_without_highlighter_markup() -> None:
    block = (
        '<pre><code class="language-python"><span class="k">def</span> '
        '<span class="nf">main</span>():\n    <span class="k">return</span> '
        "a &lt; b<br>print(1)</code></pre>"
    )
    md = page_markdown(page(block), URL)
    start = lines(md).index("```python")
    assert lines(md)[start : start + 5] == [
        "```python",
        "def main():",
        "    return a < b",
        "print(1)",
        "```",
    ]


def test_fix_a_one_line_pre_is_a_code_block_not_inline_code() -> None:
    md = page_markdown(page("<p>Then run:</p><pre>widget --serve --port 8080</pre>"), URL)
    at = lines(md).index("widget --serve --port 8080")
    assert lines(md)[at - 1] == "```"
    assert lines(md)[at + 1] == "```"


def test_inline_code_stays_inline() -> None:
    md = page_markdown(page("<p>Set <code>mode = fast</code> in the file to go faster.</p>"), URL)
    assert "Set `mode = fast` in the file to go faster." in lines(md)


# -- links and images -----------------------------------------------------------------------


def test_fix_relative_links_resolve_against_the_page_directory() -> None:
    md = page_markdown(
        page(
            '<p>Read the <a href="api.html">API reference</a>, the <a href="../faq/">FAQ</a>,'
            ' the <a href="/changes">changes</a> and <a href="https://other.example/x">this'
            "</a>.</p>"
        ),
        URL,
    )
    assert "[API reference](https://example.org/docs/api.html)" in md
    assert "[FAQ](https://example.org/faq/)" in md
    assert "[changes](https://example.org/changes)" in md
    assert "[this](https://other.example/x)" in md


def test_fix_links_resolve_against_base_href() -> None:
    md = page_markdown(
        page(
            '<p>See <a href="api.html">the API</a> and <img src="shot.png" alt="A shot">.</p>',
            head='<base href="https://cdn.example.net/v2/">',
        ),
        URL,
    )
    assert "[the API](https://cdn.example.net/v2/api.html)" in md
    assert "![A shot](https://cdn.example.net/v2/shot.png)" in md


def test_fix_fragment_links_keep_their_fragment() -> None:
    md = page_markdown(page('<p>Jump to <a href="#options">the options</a> below.</p>'), URL)
    assert "[the options](https://example.org/docs/guide.html#options)" in md


def test_fix_javascript_links_lose_their_target_and_data_images_are_dropped() -> None:
    md = page_markdown(
        page(
            '<p>Click <a href="javascript:void(0)">here</a> or write to <a href='
            '"mailto:help@example.org">help</a>.</p><p><img src="data:image/png;base64,AAAA"'
            ' alt="inline pixel"> A picture worth no words.</p>'
        ),
        URL,
    )
    assert "javascript:" not in md
    assert "Click here or write to [help](mailto:help@example.org)." in md
    assert "data:image" not in md


def test_images_are_absolute_with_their_alt_text() -> None:
    md = page_markdown(
        page(
            '<p><img src="img/run.png" alt="The widget running"> The widget running in a '
            "terminal, with its progress bar.</p>"
        ),
        URL,
    )
    assert "![The widget running](https://example.org/docs/img/run.png)" in md


def test_lazy_images_take_their_real_source() -> None:
    md = page_markdown(
        page(
            '<p><img src="data:image/gif;base64,R0lGOD" data-src="/img/lazy.jpg" alt="Lazy">'
            " The lazily loaded picture of the widget's settings screen.</p>"
        ),
        URL,
    )
    assert "![Lazy](https://example.org/img/lazy.jpg)" in md


# -- documentation pages --------------------------------------------------------------------

DOCS_PAGE = """<!doctype html><html><head><title>API - Widget docs</title></head><body>
<div class="navbar"><a href="/">Widget</a> <a href="/docs/">Docs</a> <a href="/api/">API</a>
  <form role="search"><input name="q" placeholder="Search the docs"></form></div>
<div class="container">
<nav class="toc sidebar" aria-label="Table of contents"><ul>
  <li><a href="index.html">Introduction</a></li><li><a href="guide.html">User guide</a></li>
  <li><a href="api.html">API reference</a></li><li><a href="faq.html">FAQ</a></li></ul></nav>
<div role="main" class="document"><div class="body">
<h1>API reference<a class="headerlink" href="#api-reference" title="Permalink">¶</a></h1>
<p>The module has one function, which reads a settings file and returns the settings it
found, each checked against its type. Nothing else in the module is public.</p>
<h2 id="load">load(path)</h2>
<p>Reads the file at <code>path</code> and returns a <code>Settings</code> object. Raises
<code>SettingsError</code> when a value has the wrong type, naming the line.</p>
<div class="highlight-python notranslate"><div class="highlight"><pre><span></span>
<span class="kn">from</span> <span class="nn">widget</span> <span class="kn">import</span> load
settings <span class="o">=</span> load(<span class="s2">"widget.toml"</span>)
</pre></div></div>
<table class="docutils"><thead><tr><th>Parameter</th><th>Meaning</th></tr></thead>
<tbody><tr><td>path</td><td>the file to read</td></tr></tbody></table>
<div class="admonition note"><p class="admonition-title">Note</p>
<p>The file is read once; later changes need a restart of the program that loaded it.</p></div>
</div></div>
<div class="related-pages"><a href="guide.html">Previous: User guide</a>
  <a href="faq.html">Next: FAQ</a></div>
</div>
<footer>Built with a documentation generator. <a href="/_sources/api.txt">Show source</a></footer>
</body></html>"""


def test_documentation_page_main_content() -> None:
    md = page_markdown(DOCS_PAGE, "https://docs.example.org/en/latest/api.html")
    assert lines(md)[0].startswith("# API reference")
    assert "## load(path)" in lines(md)
    assert "```python" in lines(md)
    assert 'settings = load("widget.toml")' in lines(md)
    assert "| Parameter | Meaning |" in [re.sub(r"\s+", " ", line) for line in lines(md)]
    assert "The file is read once" in md
    for boilerplate in ("User guide", "Search the docs", "Show source", "Introduction"):
        assert boilerplate not in md, boilerplate


# -- input, scope and errors ----------------------------------------------------------------


def test_bytes_are_decoded_by_their_declared_charset() -> None:
    html = page("<p>Le café est servi à la française, avec des croissants.</p>").replace(
        "<title>", '<meta charset="iso-8859-1"><title>'
    )
    md = page_markdown(html.encode("iso-8859-1"), URL)
    assert "Le café est servi à la française" in md


@pytest.mark.parametrize("html", ["", "   ", b"", "<html></html>"])
def test_a_page_without_content_gives_an_empty_string(html: str | bytes) -> None:
    assert page_markdown(html, URL) == ""
    assert page_markdown(html, URL, scope="full") == ""


def test_an_unknown_scope_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="scope"):
        page_markdown("<p>x</p>", URL, scope="all")  # type: ignore[arg-type]


def test_without_the_markdown_extra_the_error_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # None in sys.modules makes ``import trafilatura`` raise ImportError, as if not installed.
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    monkeypatch.delitem(sys.modules, "sitecrawl.parse._content_tree", raising=False)
    monkeypatch.delattr(sitecrawl.parse, "_content_tree", raising=False)
    with pytest.raises(MissingExtra) as caught:
        page_markdown(page("<p>x</p>"), URL)
    assert caught.value.extra == "markdown"
    assert isinstance(caught.value, SitecrawlError)
    assert str(caught.value) == (
        "Markdown needs trafilatura and html-to-markdown (no module trafilatura): "
        "pip install 'sitecrawl[markdown]'"
    )


class _Refuse(importlib.abc.MetaPathFinder):
    """Fails the import of trafilatura as lxml 5.2+ without lxml_html_clean does (justext,
    which trafilatura imports, needs it): an ImportError of two lines and no name."""

    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "trafilatura":
            raise ImportError(
                "lxml.html.clean module is now a separate project lxml_html_clean.\n"
                "Install lxml[html_clean] or lxml_html_clean directly."
            )


def test_a_broken_markdown_extra_is_one_line_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "meta_path", [_Refuse(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "trafilatura", raising=False)
    monkeypatch.delitem(sys.modules, "sitecrawl.parse._content_tree", raising=False)
    monkeypatch.delattr(sitecrawl.parse, "_content_tree", raising=False)
    with pytest.raises(MissingExtra) as caught:
        page_markdown(page("<p>x</p>"), URL)
    assert str(caught.value) == (
        "Markdown needs trafilatura and html-to-markdown (lxml.html.clean module is now a"
        " separate project lxml_html_clean.): pip install 'sitecrawl[markdown]'"
    )


def test_fix_text_after_a_comment_is_kept() -> None:
    """React leaves ``<!-- -->`` between text runs; trafilatura drops a comment node with
    its tail, the text after it, unless the parser drops comments first."""
    md = page_markdown(
        page("<p>The man had suffered<!-- --> months of dizziness and fatigue.</p>"), URL
    )
    assert "The man had suffered months of dizziness and fatigue." in md


def test_fix_a_figure_keeps_its_image_with_the_caption_as_its_title() -> None:
    """trafilatura with images keeps a figure's caption as body text (and galleries with it);
    without images it drops the figure. Ours: the image, its caption as the image's title."""
    md = page_markdown(
        page(
            "<figure><a href='big.png'><picture><img src='fig.png' alt='The settings screen'>"
            "</picture></a><figcaption>The settings <b>screen</b>, after a restart."
            "</figcaption></figure>"
        ),
        URL,
    )
    assert (
        '![The settings screen](https://example.org/docs/fig.png "The settings screen, after'
        ' a restart.")'
    ) in lines(md)
    assert md.count("after a restart") == 1


def test_text_that_looks_like_an_image_marker_is_left_alone() -> None:
    md = page_markdown(
        page(
            "<p>The interval \u27e60\u27e7 is empty, said the note in the margin of the page.</p>"
            '<p><img src="a.png" alt="Shot"> A shot of the widget at work on a big site.</p>'
        ),
        URL,
    )
    assert "The interval \u27e60\u27e7 is empty" in md
    assert "![Shot](https://example.org/docs/a.png)" in md


def test_extract_page_data_carries_the_markdown_when_asked() -> None:
    html = page("<p>Set <code>mode = fast</code> in the file to go faster.</p>")
    assert "markdown" not in extract_page_data(html, URL)
    data = extract_page_data(html, URL, markdown=True)
    assert data["markdown"] == page_markdown(html, URL)
    assert data["title"] == "Guide"


def test_odd_markup_gives_clean_markdown_in_both_scopes() -> None:
    html = page(
        "<p>Before the empty blocks, a sentence long enough to stay in the article text.</p>"
        "<pre></pre><pre>  \n</pre><p>A NUL\x00 here and an inline drawing "
        "<svg><text>drawn words</text></svg> there, in a paragraph of the article.</p>"
    )
    for scope in ("main", "full"):
        md = page_markdown(html, URL, scope=scope)  # type: ignore[arg-type]
        assert "```" not in md
        assert "A NUL here and an inline drawing there" in md
        assert "data:" not in md
        assert "drawn words" not in md


def test_a_figure_holding_a_quote_or_code_keeps_it() -> None:
    md = page_markdown(
        page(
            "<figure><blockquote><p>Simple things should be simple, complex things should be"
            " possible.</p></blockquote><figcaption>Alan Kay</figcaption></figure>"
            '<figure><pre><code class="language-toml">mode = "fast"\npath = "/usr"</code>'
            "</pre><figcaption>widget.toml</figcaption></figure>"
        ),
        URL,
    )
    assert "> Simple things should be simple, complex things should be possible." in lines(md)
    assert "```toml" in lines(md)
    assert 'mode = "fast"' in lines(md)


# -- boilerplate inside the article (news pages) ----------------------------------------------

NEWS_INSIDE = """
<p class="article-byline">By Jane Reporter, Staff Writer, November 19, 2026</p>
<div class="share-bar"><a href="https://x.example/share">Share on X</a>
  <a href="https://mail.example/share">Email this story to a friend</a></div>
<figure><img src="/img/harbour.jpg"><figcaption class="photo-credit">Photo: the harbour at
  dawn, courtesy of the city archive</figcaption></figure>
<div class="entry-content-read-more"><p>The harbour master opened the old ledgers to the
  public this week, and the first readers found the names of ships long forgotten. A content
  container whose name also mentions reading more is kept.</p></div>
<div class="newsletter-signup"><h3>Get our morning newsletter</h3>
  <p>Sign up for the morning briefing, delivered to your inbox every weekday, with the
  stories our editors chose for you and the weather for the harbour.</p></div>
<div class="related-stories"><h4>Related stories</h4><ul>
  <li><a href="/news/1">City council votes on the new harbour budget this week</a></li>
  <li><a href="/news/2">Lighthouse keepers remember the storm of the century</a></li>
  <li><a href="/news/3">Ferry timetable changes for the winter season announced</a></li></ul>
</div>
<p>Volunteers will copy every page by the end of the year, so that the archive can lend
  the books to schools. The last paragraph of the story.</p>
"""


def test_bylines_share_bars_newsletters_and_related_lists_inside_the_article_go() -> None:
    """trafilatura 2.3.1 alone keeps the byline, the share bar's text, the newsletter box and
    the related stories that sit inside the ``<article>``: ours drops them by their names,
    and keeps a container named for content that mentions one of those words."""
    md = page_markdown(page(NEWS_INSIDE), URL)
    for gone in (
        "Jane Reporter",
        "Share on X",
        "Email this story",
        "morning newsletter",
        "Sign up for the morning briefing",
        "Related stories",
        "Lighthouse keepers remember",
    ):
        assert gone not in md
    assert "A content container whose name also mentions reading more is kept." in md
    assert "The last paragraph of the story." in md


@pytest.mark.parametrize(
    ("names", "boilerplate"),
    [
        ("article-byline", True),
        ("c-share-bar js-share", True),
        ("relatedpoststitle", True),
        ("widget_newsletter_signup", True),
        ("photo-credit", True),
        ("entry-content-read-more", False),  # named for content too: kept
        ("post tag-news tag-politics", False),  # WordPress's article classes
        ("shareholders", False),  # a word that only begins like one
        ("article-body", False),
    ],
)
def test_boilerplate_is_told_by_its_class_or_id(names: str, boilerplate: bool) -> None:
    assert is_boilerplate(names) is boilerplate


# -- the fast path ----------------------------------------------------------------------------

SEMANTIC = f"""<!doctype html><html><head><title>Guide</title></head><body>
<header><nav><a href="/">Home</a> <a href="/docs/">Docs</a></nav></header>
<main><nav class="breadcrumb"><a href="/">Home</a> / <a href="/docs/">Docs</a></nav>
<h1>Configuring the widget</h1><p>{PROSE}</p>
<figure><img src="shot.png" alt="The settings"><figcaption>The settings screen</figcaption>
</figure><p>{PROSE}</p><aside class="related"><a href="other.html">Another guide</a></aside>
</main><footer><p>Copyright 2026 Example Inc.</p></footer></body></html>"""


def test_a_semantic_page_takes_the_fast_path_and_drops_its_named_sections() -> None:
    assert semantic_main(lxml_html.document_fromstring(SEMANTIC)) is not None
    md = page_markdown(SEMANTIC, URL)
    assert md.startswith("# Configuring the widget\n")
    assert '![The settings](https://example.org/docs/shot.png "The settings screen")' in md
    for gone in ("Home", "Another guide", "Copyright", "The settings screen\n"):
        assert gone not in md


@pytest.mark.parametrize(
    "change",
    [
        ("<p>{PROSE}</p><aside", "<p>{PROSE}</p><div class='ad'>Buy now</div><aside"),
        ("<main>", "<main><article><p>A teaser</p></article><article>"),
        ("<main>", "<main><iframe src='https://video.example/'></iframe>"),
        ("<h1>", "<h1>"),  # (the page as it is, but with two <main>s)
    ],
)
def test_a_div_an_iframe_or_two_articles_send_the_page_to_trafilatura(
    change: tuple[str, str],
) -> None:
    old, new = (part.replace("{PROSE}", PROSE) for part in change)
    page_html = SEMANTIC.replace(old, new, 1)
    if old == new:
        page_html = page_html.replace("</main>", "</main><main><p>More</p></main>")
    assert semantic_main(lxml_html.document_fromstring(page_html)) is None


# -- page shapes trafilatura loses the article on (parse/_content_shape.py) ------------------

SENTENCES = (
    "The council met on {n} to hear the harbour master's report on the winter storms.",
    "Repairs to pier {n} will take most of the spring, the engineers told the members.",
    "Fishing boats moored at berth {n} were moved inland before the second storm arrived.",
    "The ferry company said route {n} would run a reduced timetable until the summer.",
)


def prose(label: str, sentences: int = 4) -> str:
    """A paragraph of distinct sentences, each naming ``label`` (so a test can find it)."""
    return " ".join(SENTENCES[i % 4].format(n=f"{label}-{i}") for i in range(sentences))


def news_page(main: str) -> str:
    return f"""<!doctype html><html><head><title>Harbour news</title></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/news/">News</a></li>
<li><a href="/sport/">Sport</a></li></ul></nav></header>
<main>{main}</main>
<footer><p>Copyright 2026 Harbour Post. All rights reserved.</p>
<a href="/privacy">Privacy</a> <a href="/terms">Terms</a></footer></body></html>"""


def test_fix_an_article_body_split_by_ads_is_kept_whole() -> None:
    """A body cut in pieces of the same class with ad rails between them: trafilatura 2.3.1
    takes the first ``article__body`` and loses the second (its paragraphs b1, b2)."""
    pieces = [
        "".join(f"<p>{prose(label)}</p>" for label in labels)
        for labels in (["a1", "a2", "a3"], ["b1", "b2"])
    ]
    md = page_markdown(
        news_page(
            f"""<article class="article main-content"><h1>Storm repairs begin</h1>
<div class="article__chunks">
<div class="grid"><div class="body article__body grid-layout__content">{pieces[0]}</div>
  <div class="grid-layout__aside"><div class="ad">Advertisement</div></div></div>
<div class="grid"><div class="body article__body grid-layout__content">{pieces[1]}</div>
  <div class="grid-layout__aside"><div class="ad">Advertisement</div></div></div>
</div></article>"""
        ),
        URL,
    )
    for label in ("a1", "a3", "b1", "b2"):
        assert f"pier {label}-1 will take" in md
    assert md.index("pier a3-1") < md.index("pier b1-1")  # in the page's order
    assert "Advertisement" not in md


def test_fix_articles_nested_in_an_article_are_related_posts_not_its_text() -> None:
    """A blog post beside an ``<article>`` of related posts, each an ``<article>`` (the HTML
    standard's nesting): readability, which trafilatura 2.3.1 consults, takes the longer list
    of related posts for the post."""
    related = "".join(
        f"""<article class="post type-post"><h2><a href="/posts/{n}">Post {n}</a></h2>
<p>{prose(f"r{n}", 5)}</p></article>"""
        for n in range(6)
    )
    md = page_markdown(
        news_page(
            f"""<article class="post-full type-post"><h1>Only the storm</h1>
<p>{prose("own", 6)}</p></article>
<article class="post-list type-post">{related}</article>"""
        ),
        URL,
    )
    assert "pier own-1 will take" in md
    for n in range(6):
        assert f"r{n}-1" not in md


def test_a_feed_wrapped_in_one_article_keeps_its_posts() -> None:
    """The nested-articles rule needs the page's article elsewhere: a feed of posts wrapped
    in one ``<article>``, and nothing else, is the page's content."""
    posts = "".join(
        f"<article><h2>Post {n}</h2><p>{prose(f'f{n}', 5)}</p></article>" for n in range(4)
    )
    md = page_markdown(news_page(f'<article class="feed">{posts}</article>'), URL)
    for n in range(4):
        assert f"pier f{n}-1 will take" in md


def test_fix_an_article_body_whose_other_classes_trafilatura_discards_is_kept() -> None:
    """trafilatura 2.3.1's discard rules match parts of the whole class value: ``bar`` in
    ``harbour-bar-article-wrap`` drops the article body inside the article it chose by its
    id, with the page's navigation bars; its precision mode is left with the standfirst."""
    body = "".join(f"<p>{prose(label)}</p>" for label in ("c1", "c2", "c3"))
    md = page_markdown(
        news_page(
            f"""<article class="article" id="article-contents">
<div class="article-head"><h1>Storm repairs begin</h1><p>{prose("s1", 5)}</p></div>
<div class="article__body harbour-bar-article-wrap">{body}
<p><strong>Write to</strong> the newsroom at news@example.org</p></div></article>"""
        ),
        URL,
    )
    for label in ("s1", "c1", "c2", "c3"):
        assert f"pier {label}-1 will take" in md


def test_only_the_body_naming_and_hiding_classes_stay_on_a_body() -> None:
    tree = lxml_html.document_fromstring(
        f"""<html><body><div class="article-body menu-wrap is-hidden">{prose("h")}</div>
<div class="sidebar post-content">short</div><p>{prose("x", 2)}</p></body></html>"""
    )
    assert plain_body_names(tree.body) == 1
    assert tree.body[0].get("class") == "article-body is-hidden"
    assert tree.body[1].get("class") == "sidebar post-content"  # under a tenth of the text


def test_a_list_of_teasers_under_one_class_is_not_an_article_in_pieces() -> None:
    teasers = "".join(
        f'<div class="post-content"><h3>Post {n}</h3><p>{prose(f"t{n}", 1)}</p></div>'
        for n in range(5)
    )
    tree = lxml_html.document_fromstring(
        f"<html><body><div class='teasers'>{teasers}</div></body></html>"
    )
    assert join_split_body(tree.body) == 0
    assert tree.body[0].get("class") == "teasers"
