"""-o DIR/: one Markdown file a page at a path mirroring its URL (never outside DIR), with YAML
front matter a YAML parser reads back exactly; each file written whole (temp + rename)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from sitecrawl.sinks import TEMP_MARK, MarkdownFiles, markdown_path, sink_for
from sitecrawl.sinks._markdown_files import front_matter, yaml_string

HOME = "example.org"


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("https://example.org/", "index.md"),
        ("https://example.org", "index.md"),
        ("https://example.org/docs/guide.html", "docs/guide.md"),
        ("https://example.org/docs/guide.HTM", "docs/guide.md"),
        ("https://example.org/a/", "a/index.md"),
        ("https://example.org/a", "a.md"),
        ("https://example.org/v1.2/notes.txt", "v1.2/notes.txt.md"),
        ("https://example.org/caf%C3%A9/cr%C3%A8me", "café/crème.md"),
        ("https://example.org/a//b/./c", "a/b/c.md"),
        ("https://example.org/%2e%2e/%2e%2e/etc/passwd", "etc/passwd.md"),
        ("https://example.org/..%2f..%2fetc/x", "_._.._etc/x.md"),
        ("https://example.org/a%2Fb%5Cc", "a_b_c.md"),
        ("https://example.org/.hidden/.env", "_hidden/_env.md"),
        ("https://example.org/x/%2e%2e", "x/index.md"),
        ("https://example.org/con:1*%3F<>|", "con_1_____.md"),
        ("https://other.org:8443/a/b", "other.org_8443/a/b.md"),
        ("https://example.org/#frag", "index.md"),
    ],
)
def test_paths_mirror_the_url_and_stay_inside(url: str, path: str) -> None:
    got = markdown_path(url, HOME)
    assert got == path
    parts = got.split("/")
    assert all(part not in ("", ".", "..") and not part.startswith(".") for part in parts)


def test_query_strings_are_safe_and_distinct() -> None:
    one = markdown_path("https://example.org/list?page=2&s=a", HOME)
    assert one.startswith("list_page=2_s=a_") and one.endswith(".md")
    assert "?" not in one and "&" not in one
    variants = ["?a&b", "?a_b", "?a%26b", "?A&b", "?page=../../x", "?" + "q" * 500]
    paths = {markdown_path(f"https://example.org/list{query}", HOME) for query in variants}
    assert len(paths) == len(variants)
    assert all("/" not in path and len(path) < 120 for path in paths)
    assert markdown_path("https://example.org/list", HOME) == "list.md"


def test_long_segments_are_cut_and_stay_distinct() -> None:
    first = markdown_path("https://example.org/" + "a" * 300, HOME)
    second = markdown_path("https://example.org/" + "a" * 301, HOME)
    assert first != second
    assert len(first) <= 103 and len(second) <= 103


NASTY = [
    "plain",
    'quote " and back\\slash',
    "colon: value # not a comment",
    "- a list? no",
    "yes",
    "null",
    "123",
    "line\nbreak\r\tand tab",
    "\x00\x07\x1b[2J\x7f\x85 controls",
    "sep\u2028par\u2029bom\ufeff",
    "emoji 🎉 and café",
    "  spaces around  ",
    "",
    "{not: a map}",
    "*alias &anchor !tag",
    "%directive",
    "---",
]


@pytest.mark.parametrize("text", NASTY)
def test_yaml_strings_read_back_exactly(text: str) -> None:
    assert yaml.safe_load(f"key: {yaml_string(text)}\n") == {"key": text}


def test_front_matter_reads_back() -> None:
    values: dict[str, str | None] = {"url": "https://x.org/a?b=1", "title": NASTY[1], "d": None}
    block = front_matter(values)
    assert block.startswith("---\n") and block.endswith("\n---\n")
    assert yaml.safe_load(block.strip().strip("-")) == values


def page(url: str, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "url": url,
        "final_url": url,
        "status": 200,
        "content_type": "text/html",
        "title": f"Title of {url}",
        "meta_description": "About it.",
        "error": None,
        "markdown": f"# Heading\n\nText of {url}.\n",
    }
    record.update(fields)
    return record


def read(path: Path) -> tuple[dict[str, Any], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, _, body = text[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def test_one_file_per_page_with_front_matter(tmp_path: Path) -> None:
    out = tmp_path / "site"
    sink = sink_for(f"{out}/", base_url="https://example.org/")
    assert isinstance(sink, MarkdownFiles)
    with sink:
        sink.write_record(page("https://example.org/"))
        sink.write_record(page("https://example.org/docs/guide.html", title='A "guide": x'))
        sink.write_record(page("https://example.org/docs/"))
        sink.write_record(page("https://cdn.example.org/a"))
        sink.write_record(page("https://example.org/gone", status=404, error="404", markdown=None))
        sink.write_record(page("https://example.org/pdf", content_type="pdf", markdown=None))
        sink.write_record(
            page("https://example.org/cut", error="too large", error_kind="too_large")
        )
        sink.write_record(page("https://example.org/old", final_url="https://example.org/"))
    files = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert files == ["cdn.example.org/a.md", "docs/guide.md", "docs/index.md", "index.md"]
    meta, body = read(out / "docs" / "guide.md")
    assert meta["url"] == "https://example.org/docs/guide.html"
    assert meta["title"] == 'A "guide": x'
    assert meta["description"] == "About it."
    assert str(meta["fetched_at"]).endswith("Z")
    assert body == "\n# Heading\n\nText of https://example.org/docs/guide.html.\n"
    assert sink.written == 4


def test_same_file_for_two_urls_keeps_both(tmp_path: Path) -> None:
    out = tmp_path / "site"
    with MarkdownFiles(f"{out}/", base_url="https://example.org/") as sink:
        sink.write_record(page("https://example.org/a"))
        sink.write_record(page("https://example.org/a.html"))
        sink.write_record(page("https://example.org/A"))
    names = sorted(path.name for path in out.iterdir())
    assert len(names) == 3 and "a.md" in names
    urls = {read(out / name)[0]["url"] for name in names}
    assert urls == {"https://example.org/a", "https://example.org/a.html", "https://example.org/A"}


def test_a_symbolic_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "docs").symlink_to(elsewhere)
    with MarkdownFiles(f"{out}/", base_url="https://example.org/") as sink:
        sink.write_record(page("https://example.org/docs/a"))
        sink.write_record(page("https://example.org/b"))
    assert list(elsewhere.iterdir()) == []
    assert (out / "b.md").is_file()
    assert sink.refused == 1


def test_files_are_replaced_whole_and_no_temporary_file_stays(tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.md").write_text("old")
    (out / "keep.md").write_text("not ours")
    with MarkdownFiles(f"{out}/", base_url="https://example.org/") as sink:
        sink.write_record(page("https://example.org/", markdown="new"))
    assert read(out / "index.md")[1] == "\nnew\n"
    assert (out / "keep.md").read_text() == "not ours"
    assert not [name for name in os.listdir(out) if TEMP_MARK in name]


def test_a_file_in_place_of_the_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("a file")
    with pytest.raises(NotADirectoryError):
        MarkdownFiles(f"{tmp_path / 'site'}/")


def test_a_page_replaces_the_file_a_redirect_to_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "site"
    with MarkdownFiles(f"{out}/", base_url="https://example.org/") as sink:
        moved = page("https://example.org/old", final_url="https://example.org/new")
        sink.write_record({**moved, "markdown": "via the redirect"})
        sink.write_record(page("https://example.org/new", markdown="the page"))
        sink.write_record({**moved, "markdown": "via the redirect again"})
    assert [path.name for path in out.iterdir()] == ["new.md"]
    assert read(out / "new.md")[1] == "\nthe page\n"
