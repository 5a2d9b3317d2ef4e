"""llms.txt and llms-full.txt: structure per the llms.txt proposal, from page records; the
sink that writes them from a crawl (order, what is listed, the spool, atomicity)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import pytest

from sitecrawl.sinks import LlmsFile, sink_for
from sitecrawl.sinks._llms import LlmsPage, llms_full_txt, llms_txt, section_of

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


def record(url: str, title: str, description: str = "", **fields: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "url": url,
        "final_url": url,
        "status": 200,
        "content_type": "text/html; charset=utf-8",
        "title": title,
        "meta_description": description,
        "error": None,
        "indexable": True,
        "markdown": f"# {title}\n\nAbout {title}.\n",
    }
    found.update(fields)
    return found


RECORDS = [
    record("https://example.org/docs/b.html", "B", "Second."),
    record("https://example.org/", "Widget", "All about it."),
    record("https://example.org/docs/a.html", "A", "First."),
    record("https://example.org/about", "About"),
    record("https://example.org/docs/moved", "A", final_url="https://example.org/docs/a.html"),
    record("https://example.org/gone", "Gone", status=404, error="404", markdown=None),
    record("https://example.org/private", "Hidden", indexable=False),
    record("https://example.org/data.csv", "", content_type="text/csv", markdown=None),
]


def write(path: Path, records: list[dict[str, Any]]) -> LlmsFile:
    sink = sink_for(str(path), base_url="https://example.org/")
    assert isinstance(sink, LlmsFile)
    with sink:
        for item in records:
            sink.write_record(item)
    return sink


def test_llms_file_lists_the_content_pages_in_url_order(tmp_path: Path) -> None:
    write(tmp_path / "llms.txt", RECORDS)
    assert (tmp_path / "llms.txt").read_text() == (
        "# Widget\n\n> All about it.\n\n## Pages\n\n"
        "- [Widget](https://example.org/): All about it.\n"
        "- [About](https://example.org/about)\n\n"
        "## Docs\n\n"
        "- [A](https://example.org/docs/a.html): First.\n"
        "- [B](https://example.org/docs/b.html): Second.\n"
    )
    # the same file whatever order the pages came in
    (tmp_path / "again").mkdir()
    write(tmp_path / "again" / "llms.txt", RECORDS[::-1])
    again = (tmp_path / "again" / "llms.txt").read_text()
    assert again == (tmp_path / "llms.txt").read_text()


def test_llms_full_file_spools_the_markdown_and_keeps_the_order(tmp_path: Path) -> None:
    sink = write(tmp_path / "llms-full.txt", RECORDS)
    text = (tmp_path / "llms-full.txt").read_text()
    urls = ["/", "/about", "/docs/a.html", "/docs/b.html"]
    where = [text.index(f"URL: https://example.org{url}\n") for url in urls]
    assert where == sorted(where)
    assert text.count("\n---\n") == 4
    assert "# B\n\nURL: https://example.org/docs/b.html\n\nAbout B.\n" in text
    assert "Hidden" not in text and "Gone" not in text
    # the Markdown was not held in memory: each page's came back from the spool
    assert all(page.markdown == "" for page in sink._pages.values())
    leftovers = [name for name in os.listdir(tmp_path) if name != "llms-full.txt"]
    assert leftovers == []


def test_a_failed_run_leaves_the_existing_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "llms.txt"
    path.write_text("before\n")
    with pytest.raises(RuntimeError), sink_for(str(path)) as sink:
        assert isinstance(sink, LlmsFile)
        sink.write_record(RECORDS[1])
        raise RuntimeError("the crawl failed")
    assert path.read_text() == "before\n"
    assert os.listdir(tmp_path) == ["llms.txt"]
    # an interrupted one writes what it has, whole
    with contextlib.suppress(KeyboardInterrupt), sink_for(str(path)) as sink:
        assert isinstance(sink, LlmsFile)
        sink.write_record(RECORDS[1])
        raise KeyboardInterrupt
    assert path.read_text().startswith("# Widget\n")
