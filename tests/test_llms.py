"""llms.txt and llms-full.txt: structure per the llms.txt proposal, from page records."""

from __future__ import annotations

from sitecrawl.parse._llms import LlmsPage, llms_full_txt, llms_txt, section_of

PAGES = [
    LlmsPage(
        "https://example.org/docs/guide.html",
        "Guide",
        "How to set the widget up.",
        "# Guide\n\nInstall it, then run it.\n",
    ),
    LlmsPage(
        "https://example.org/",
        "Widget",
        "Everything about\n the widget.",
        "# Widget\n\nThe widget does one thing.\n",
    ),
    LlmsPage("https://example.org/blog/2026/launch", "We [launched]", "", "Launch day.\n"),
    LlmsPage("https://example.org/about", "About us", "Who we are.", "We are three people.\n"),
    LlmsPage("https://example.org/docs/api.html", "API", "The reference.", "## load\n\nReads.\n"),
    LlmsPage("https://example.org/getting-started/", "Start", "", "Begin here.\n"),
]


def test_llms_txt_structure() -> None:
    assert llms_txt(PAGES) == (
        "# Widget\n"
        "\n"
        "> Everything about the widget.\n"
        "\n"
        "## Pages\n"
        "\n"
        "- [Widget](https://example.org/): Everything about the widget.\n"
        "- [About us](https://example.org/about): Who we are.\n"
        "\n"
        "## Docs\n"
        "\n"
        "- [Guide](https://example.org/docs/guide.html): How to set the widget up.\n"
        "- [API](https://example.org/docs/api.html): The reference.\n"
        "\n"
        "## Blog\n"
        "\n"
        "- [We \\[launched\\]](https://example.org/blog/2026/launch)\n"
        "\n"
        "## Getting started\n"
        "\n"
        "- [Start](https://example.org/getting-started/)\n"
    )


def test_site_name_and_summary_can_be_given_or_fall_back_to_the_host() -> None:
    text = llms_txt(PAGES, site_name="Widget Docs", summary="Docs.")
    assert text.startswith("# Widget Docs\n\n> Docs.\n\n## Pages\n")
    no_home = [page for page in PAGES if page.url != "https://example.org/"]
    assert llms_txt(no_home).startswith("# example.org\n\n## Pages\n")


def test_sections_by_top_level_folder() -> None:
    assert section_of("https://example.org/") == "Pages"
    assert section_of("https://example.org/about.html") == "Pages"
    assert section_of("https://example.org/docs/") == "Docs"
    assert section_of("https://example.org/docs/a/b.html") == "Docs"
    assert section_of("https://example.org/user_guide/x") == "User guide"
    assert section_of("https://example.org/%C3%A9t%C3%A9/x") == "Été"


def test_awkward_urls_and_titles_stay_one_readable_link() -> None:
    page = LlmsPage("https://example.org/a (b)", "Two\nlines", "A\n\ndescription")
    assert "- [Two lines](<https://example.org/a (b)>): A description\n" in llms_txt([page])
    untitled = LlmsPage("https://example.org/docs/x.html")
    assert "- [/docs/x.html](https://example.org/docs/x.html)\n" in llms_txt([untitled])


def test_llms_full_txt_has_every_page_in_order_under_its_title_and_url() -> None:
    text = llms_full_txt(PAGES)
    assert text.startswith("# Widget\n\n> Everything about the widget.\n\n---\n\n# Widget\n")
    order = [
        text.index(f"URL: {url}\n")
        for url in (
            "https://example.org/",
            "https://example.org/about",
            "https://example.org/docs/guide.html",
            "https://example.org/docs/api.html",
            "https://example.org/blog/2026/launch",
            "https://example.org/getting-started/",
        )
    ]
    assert order == sorted(order)
    # the title H1 is not repeated from the page's own Markdown
    assert (
        "# Guide\n\nURL: https://example.org/docs/guide.html\n\nInstall it, then run it.\n" in text
    )
    assert "# API\n\nURL: https://example.org/docs/api.html\n\n## load\n\nReads.\n" in text
    assert text.count("\n---\n") == len(PAGES)


def test_no_pages() -> None:
    assert llms_txt([]) == "# Site\n"
    assert llms_full_txt([], site_name="X") == "# X\n"
