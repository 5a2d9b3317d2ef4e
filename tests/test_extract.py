from __future__ import annotations

import pytest

from sitecrawl import (
    extract_page_data,
    get_first_paragraph_from_html,
    get_h1_from_html,
    get_images_from_html,
    get_urls_from_html,
)
from sitecrawl.parse._decode import _declared_charset, decode_html

BASE = "https://blog.boot.dev"


def test_get_h1_from_html() -> None:
    assert get_h1_from_html("<html><body><h1>Test Title</h1></body></html>") == "Test Title"
    assert get_h1_from_html("<h1>  Hello <b>big</b>\n world </h1><h1>2</h1>") == "Hello big world"
    assert get_h1_from_html("<html><body><p>none</p></body></html>") == ""


@pytest.mark.parametrize(
    ("inner", "text"),
    [
        (
            "GCC 12 Release Series<br>Changes, New Features",
            "GCC 12 Release Series Changes, New Features",
        ),
        ("one<br>two", "one two"),
        ("one<br/><br>two<br>", "one two"),
        ("fo<b>o</b> b<span>a</span><em>r</em>", "foo bar"),
        ("a<!-- c -->b", "ab"),
        ("<span>a<br>b</span>c", "a bc"),
        ("<span>x<div>a</div>b</span>", "x a b"),
        ("<div>a</div><div>b</div>", "a b"),
        ("<ul><li>a</li><li>b</li></ul>c", "a b c"),
        ("<table><tr><td>a</td><td>b</td></tr></table>", "a b"),
        ("  a \n\t b\u00a0c ", "a b c"),
        ("", ""),
    ],
)
def test_element_text_separates_words_as_a_browser_does(inner: str, text: str) -> None:
    """Words are separated at <br> and at block edges (innerText), not at inline elements;
    whitespace collapsed; for every element whose text is kept."""
    from sitecrawl.parse._extract import parse_html

    html = (
        f"<title>t</title><body><h1>{inner}</h1><h2>{inner}</h2><h2>x</h2>"
        f'<a href="/a">{inner}</a><p>{inner}</p>'
    )
    data = parse_html(html, "https://site.test/", link_details=True)
    assert (data.h1, data.h2) == (text, [text, "x"])
    assert data.links[0][1] == text
    if "<div" not in inner and "<ul" not in inner and "<table" not in inner:  # p can't hold them
        assert data.first_paragraph == text
    assert get_h1_from_html(f"<h1>{inner}</h1>") == text


def test_element_text_of_a_deep_element_without_recursion() -> None:
    from sitecrawl.parse._extract import parse_html

    deep = "<span>" * 5000 + "a<br>b" + "</span>" * 5000
    data = parse_html(
        f'<h2>{deep}</h2><a href="/x">{deep}</a>', "https://site.test/", link_details=True
    )
    assert data.h2 == ["a b"]
    assert data.links[0][1] == "a b"


def test_first_paragraph_prefers_main() -> None:
    html = "<p>Outside paragraph.</p><main><p>Main paragraph.</p><p>second</p></main>"
    assert get_first_paragraph_from_html(html) == "Main paragraph."
    assert get_first_paragraph_from_html("<p>First</p><p>Second</p>") == "First"
    assert get_first_paragraph_from_html("<main><div>no p</div></main><p>after</p>") == "after"
    # Nothing after <main> counts as inside it: with none there, the document's first <p>.
    html = "<p>before</p><main><div>no p</div></main><p>after</p>"
    assert get_first_paragraph_from_html(html) == "before"


@pytest.mark.parametrize("before", [0, 1, 31, 32, 33, 200])
def test_first_paragraph_of_main_past_many_elements(before: int) -> None:
    """The first <p> of <main> in document order, however deep and however many elements
    come first."""
    filler = "<div><span>x</span></div>" * (before // 2) + "<hr>" * (before % 2)
    html = (
        f"<p>outside</p><main>{filler}<section><ul><li><p>deep</p></li></ul></section>"
        "<p>later</p></main>"
    )
    assert get_first_paragraph_from_html(html) == "deep"
    assert get_first_paragraph_from_html("<div>nothing</div>") == ""


def test_get_urls_from_html_absolute_and_relative() -> None:
    html = (
        '<a href="https://blog.boot.dev"><span>Boot.dev</span></a>'
        '<a href="/path/one">one</a><a href="two?x=1#frag">two</a>'
        '<a href="mailto:a@b.c">m</a><a href="tel:123">t</a><a href="javascript:void(0)">j</a>'
        '<a href="data:text/html,x">d</a><a href="ftp://x.org/">f</a><a>no href</a>'
        '<a href="https://other.com/path/one">other</a><a href="/path/one">dup</a>'
    )
    assert get_urls_from_html(html, BASE + "/dir/page") == [
        "https://blog.boot.dev/",
        "https://blog.boot.dev/path/one",
        "https://blog.boot.dev/dir/two?x=1",
        "https://other.com/path/one",
    ]


def test_base_href_changes_resolution() -> None:
    html = (
        '<head><base href="https://cdn.boot.dev/assets/"></head><a href="x">x</a><img src="i.png">'
    )
    assert get_urls_from_html(html, BASE) == ["https://cdn.boot.dev/assets/x"]
    assert get_images_from_html(html, BASE) == ["https://cdn.boot.dev/assets/i.png"]


def test_get_images_from_html() -> None:
    html = '<img src="/logo.png" alt="Logo"><img src="https://x.org/a.jpg"><img alt="no src">'
    assert get_images_from_html(html, BASE) == [
        "https://blog.boot.dev/logo.png",
        "https://x.org/a.jpg",
    ]


def test_extract_page_data_fields() -> None:
    html = """<html><head><title> My  Title </title>
      <META NAME="Description" content=" about it ">
      <link rel="canonical" href="/canon/"></head>
      <body><h1>Heading</h1><p>intro</p><main><p>body text</p></main>
      <a href="/a">a</a><img src="/i.png"></body></html>"""
    data = extract_page_data(html, BASE + "/page")
    assert data == {
        "url": BASE + "/page",
        "title": "My Title",
        "h1": "Heading",
        "first_paragraph": "body text",
        "meta_description": "about it",
        "canonical": "https://blog.boot.dev/canon/",
        "outgoing_links": ["https://blog.boot.dev/a"],
        "image_urls": ["https://blog.boot.dev/i.png"],
    }


def test_extract_survives_broken_html() -> None:
    data = extract_page_data("<h1>unclosed <p>para <a href='/x'>link", BASE)
    assert data["h1"] == "unclosed para link"
    assert data["outgoing_links"] == ["https://blog.boot.dev/x"]


def test_charset_order_http_then_meta_then_utf8() -> None:
    latin = "café".encode("latin-1")
    meta = b'<meta charset="windows-1252">' + latin
    assert _declared_charset(meta, "utf-8") == "utf-8"
    assert _declared_charset(meta, None) == "cp1252"
    assert decode_html(meta).endswith("café")
    equiv = b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">' + latin
    assert decode_html(equiv).endswith("café")
    assert decode_html(latin) == "café"  # undeclared, not UTF-8: the detector reads cp1252
    assert decode_html(b"\xef\xbb\xbfhi", "latin-1") == "hi"
    assert _declared_charset(b"x", "no-such-charset") is None  # then UTF-8


def test_links_keep_anchor_text_rel_and_duplicates_in_one_parse() -> None:
    from sitecrawl.parse._extract import parse_html

    html = (
        '<a href="/a" rel=" nofollow ">A  <b>bold</b>\n text</a>'
        '<a href="mailto:x@y.z">mail</a><a href="/a#frag">again</a>'
        '<a href="https://other.test/">o</a><a href="">self</a>'
    )
    data = parse_html(html, "https://site.test/dir/page", link_details=True)
    assert data.links == [
        ("https://site.test/a", "A bold text", "nofollow", "a"),
        ("https://site.test/a", "again", None, "a"),
        ("https://other.test/", "o", None, "a"),
        ("https://site.test/dir/page", "self", None, "a"),
    ]
    assert data.outgoing_links == [
        "https://site.test/a",
        "https://other.test/",
        "https://site.test/dir/page",
    ]
    assert parse_html(html, "https://site.test/dir/page").outgoing_links == data.outgoing_links
    from sitecrawl._urls import JoinCache

    joins = JoinCache()
    for _ in range(2):  # memoized joins give the same links
        assert parse_html(html, "https://site.test/dir/page", joins, link_details=True) == data


def test_every_link_kind_images_with_alt_and_page_fields_in_one_parse() -> None:
    from sitecrawl.parse._extract import parse_html

    html = (
        '<html lang=" fr-CA "><head><base href="/b/">'
        '<link rel="stylesheet" href="s.css"><link rel="preconnect" href="https://cdn.test">'
        '<link rel="alternate" hreflang="en" href="/en/"><link rel="alternate" hreflang="de"'
        ' href="https://site.test/de/"><script src="app.js"></script>'
        "<script>var not_a_word = 1;</script><style>p { color: red }</style></head>"
        "<body><h2> One  two </h2><p>Three four, five.</p><h2></h2>"
        '<img src="i.png" alt=" An   image "><img src="j.png"><img src="k.png" alt="">'
        '<img alt="no src"><iframe src="https://video.test/embed"></iframe>'
        '<a href="x">six</a><script>more(); code();</script><noscript>hidden</noscript>'
        "</body></html>"
    )
    data = parse_html(html, "https://site.test/page", link_details=True)
    assert data.links == [
        ("https://site.test/b/x", "six", None, "a"),
        ("https://site.test/b/i.png", "An image", None, "img"),
        ("https://site.test/b/j.png", None, None, "img"),
        ("https://site.test/b/k.png", "", None, "img"),
        ("https://site.test/b/s.css", None, "stylesheet", "link"),
        ("https://site.test/en/", None, "alternate", "link"),
        ("https://site.test/de/", None, "alternate", "link"),
        ("https://site.test/b/app.js", None, None, "script"),
        ("https://video.test/embed", None, None, "iframe"),
    ]
    assert data.image_urls == [f"https://site.test/b/{n}.png" for n in "ijk"]
    assert data.h2 == ["One two", ""]
    assert data.lang == "fr-CA"
    assert data.hreflang == [("en", "https://site.test/en/"), ("de", "https://site.test/de/")]
    assert data.word_count == 6  # One two Three four, five. six
    # Without a page store only the per-link details are left out; the record is the same.
    plain = parse_html(html, "https://site.test/page")
    assert plain.links == []
    assert (plain.h2, plain.hreflang, plain.word_count) == (data.h2, data.hreflang, 6)
    assert (plain.lang, plain.image_urls) == ("fr-CA", data.image_urls)
    assert plain.outgoing_links == ["https://site.test/b/x"]
    # Any Unicode whitespace separates words, as in a browser: the no-break space too.
    assert parse_html("<p>a\u00a0b c\td\u00e9</p>", "https://site.test/").word_count == 4
    assert parse_html("<p>a\u2009b\u3000c\u202fd</p>", "https://site.test/").word_count == 4
    assert parse_html("", "https://site.test/").word_count == 0


def test_head_fields_first_match_case_insensitive_blank_is_absent() -> None:
    """The head is read in one walk; it must answer as the CSS selectors it replaced:
    names and rels case-insensitive, the first match wins (even when blank), nested
    elements (``<noscript>``) count, a ``<base>`` without ``href`` is skipped."""
    from sitecrawl.parse._extract import parse_html

    html = (
        "<html><head><base target=_top><base href=' /b/ '><base href='/ignored/'>"
        "<noscript><meta NAME='Robots' content=' noindex, NOFOLLOW '></noscript>"
        "<meta name='robots' content='index'>"
        "<meta name='DESCRIPTION' content='  '><meta name='description' content='second'>"
        "<link rel='Canonical Stylesheet' href=' /canon '><link rel='canonical' href='/two'>"
        "<link rel='ALTERNATE' hreflang=' fr ' href='fr/'><link rel=alternate href='no-lang'>"
        "<title> The  title </title></head><body><svg><title>not it</title></svg></body></html>"
    )
    data = parse_html(html, "https://site.test/dir/page")
    assert data.robots_meta == "noindex, NOFOLLOW"
    assert data.meta_description == ""  # blank, not missing: the first match decides
    assert data.canonical == "https://site.test/canon"
    assert data.hreflang == [("fr", "https://site.test/b/fr/")]
    assert data.title == "The title"
    no_head_title = parse_html("<body><p>x</p><title>Late</title></body>", "https://site.test/")
    assert no_head_title.title == "Late"
    empty = parse_html("<p>nothing in the head</p>", "https://site.test/")
    assert (empty.title, empty.canonical, empty.meta_description, empty.robots_meta) == (
        None,
        None,
        None,
        None,
    )


def test_first_paragraph_in_main_wherever_it_is() -> None:
    """The first ``<p>`` of ``<main>`` wins over earlier paragraphs, however many come
    before it and however deep it sits; without one, the document's first ``<p>``."""
    before = "".join(f"<p>outside {i}</p>" for i in range(12))
    deep = "<main><div><section><article><p>deep in main</p></article></section></div></main>"
    assert get_first_paragraph_from_html(before + deep) == "deep in main"
    assert get_first_paragraph_from_html("<p>a</p>" + deep + "<p>b</p>") == "deep in main"
    assert get_first_paragraph_from_html(before + "<main><h1>no p</h1></main>") == "outside 0"
    assert get_first_paragraph_from_html("<main><p>m1</p><p>m2</p></main>") == "m1"
    assert get_first_paragraph_from_html("<p>one</p><main></main><main><p>2nd</p></main>") == "one"


def test_first_paragraph_after_main_honours_role_main_then_article() -> None:
    """Documentation sites mark their content with ``role="main"`` (Sphinx) or ``<article>``
    rather than ``<main>``: the sidebar's or the legal footer's ``<p>`` came first (issue 30,
    item 7). ``<main>`` still wins when it has a paragraph."""
    sidebar, footer = "<nav><p>sidebar</p></nav>", "<footer><p>legal</p></footer>"
    role = '<div class="body" role="main"><h1>t</h1><p>content</p></div>'
    article = "<article><h1>t</h1><p>article text</p></article>"
    get = get_first_paragraph_from_html
    assert get(sidebar + role + footer) == "content"
    assert get(sidebar + '<div role="MAIN"><p>any case</p></div>') == "any case"
    assert get(footer.replace("footer", "div") + article) == "article text"
    assert get(sidebar + article + role) == "content"  # role="main" before <article>
    assert get(sidebar + "<main><p>in main</p></main>" + role + article) == "in main"
    assert get(sidebar + "<main>no p</main>" + article) == "article text"
    assert get(sidebar + '<div role="main">no p</div><article>none</article>') == "sidebar"
    page = extract_page_data("<html><body>" + sidebar + role + footer, "http://site.test/")
    assert page["first_paragraph"] == "content"


def test_nul_characters_are_dropped_as_the_tree_builder_drops_them() -> None:
    assert decode_html(b"<p>a\0b</p>\0") == "<p>ab</p>"
    assert decode_html("<p>\0caf\u00e9</p>".encode("utf-16"), "utf-16") == "<p>caf\u00e9</p>"
    assert extract_page_data("<h1>a\0b</h1>", "http://x.test/")["h1"] == "ab"
