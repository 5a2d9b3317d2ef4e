"""``sitecrawl sitemap``: the indexable, canonical 200 HTML pages of a crawl, valid against the
sitemaps.org schemas, split with an index past the protocol's limits, written whole or not at
all."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from conftest import ServeFn
from seo_site import DUPLICATES, seo_app
from sitecrawl import Page
from sitecrawl._cli import main
from sitecrawl.audit import sitemap_entry
from sitecrawl.sinks import sitemap_documents, write_sitemaps

DATA = Path(__file__).parent / "data"
URLSET = xmlschema.XMLSchema(DATA / "sitemap.xsd")
INDEX = xmlschema.XMLSchema(DATA / "siteindex.xsd")
NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"

#: The pages of the SEO site a sitemap should list: 200, HTML, indexable, self-canonical.
LISTABLE = {
    *DUPLICATES,  # the near-duplicate pages: indexable and self-canonical all the same
    "/",
    "/clean/a",
    "/clean/b",
    "/en/",
    "/de/",
    "/hl/bad",
    "/hl/uk",
    "/hl/fr1",
    "/hl/fr2",
    "/hl/noreturn",
    "/t/bare",
    "/t/dup1",
    "/t/dup2",
    "/t/slow",
    "/t/img",
    "/t/unlisted",
    "/sm/orphan",
    "/sd/bad",
}


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield


def entries(path: str | Path) -> list[tuple[str, str | None]]:
    return entries_of(Path(path).read_bytes())


def entries_of(document: bytes) -> list[tuple[str, str | None]]:
    root = ET.fromstring(document)
    return [
        (url.findtext(f"{NS}loc") or "", url.findtext(f"{NS}lastmod"))
        for url in root.iter(f"{NS}url")
    ]


def test_the_sitemap_of_a_crawl(serve: ServeFn, capsys: pytest.CaptureFixture[str]) -> None:
    site = serve(seo_app())
    assert main(["crawl", site.url, "--state", "s.db", "-q", "--retries", "0"]) == 0
    assert main(["sitemap", "s.db", "-o", "sitemap.xml"]) == 0
    assert "23 URLs from s.db: sitemap: sitemap.xml" in capsys.readouterr().err
    URLSET.validate("sitemap.xml")
    found = entries("sitemap.xml")
    assert {url.removeprefix(site.url) for url, _ in found} == LISTABLE
    assert [url for url, _ in found] == sorted(url for url, _ in found)
    # lastmod from Last-Modified (Wed, 21 Oct 2026 07:28:00 GMT), only where it was sent.
    assert {url: mod for url, mod in found if mod} == {
        site.url + "/clean/a": "2026-10-21T07:28:00+00:00"
    }
    assert sorted(os.listdir()) == ["s.db", "sitemap.xml"]  # no part, no temporary file
    assert main(["sitemap", "s.db", "-q"]) == 0  # the default name: STATE's, .sitemap.xml
    assert entries("s.sitemap.xml") == found


def test_which_pages_a_sitemap_lists() -> None:
    def page(**fields: Any) -> Page:
        return Page(**{"url": "https://ex.com/a", "status": 200, "indexable": True, **fields})

    assert sitemap_entry(page()) == ("https://ex.com/a", None)
    for change in (
        {"status": 404, "error": "HTTP 404"},
        {"status": 203},
        {"indexable": False},
        {"indexable": None},  # no HTML was read
        {"content_type": "application/pdf"},
        {"canonical": "https://ex.com/b"},
    ):
        assert sitemap_entry(page(**change)) is None, change
    assert sitemap_entry(page(canonical="https://ex.com/a/")) == ("https://ex.com/a", None)
    moved = page(final_url="https://ex.com/b", redirects=[("https://ex.com/a", 301)])
    assert sitemap_entry(moved) == ("https://ex.com/b", None)
    dated = page(last_modified="Mon, 01 Jun 2026 10:00:00 +0200")
    assert sitemap_entry(dated) == ("https://ex.com/a", "2026-06-01T08:00:00+00:00")
    assert sitemap_entry(page(last_modified="yesterday")) == ("https://ex.com/a", None)


URLS = [(f"https://ex.com/p{i}?a=1&b=<{i}>", None) for i in range(7)]


@pytest.fixture
def out() -> Path:
    Path("out").mkdir()
    return Path("out")


def test_a_split_sitemap_is_parts_and_their_index(out: Path) -> None:
    written = write_sitemaps(
        URLS, "out/sitemap.xml", base_url="https://cdn.ex.com/maps", max_urls=3
    )
    assert written == [
        "out/sitemap-1.xml",
        "out/sitemap-2.xml",
        "out/sitemap-3.xml",
        "out/sitemap.xml",
    ]
    INDEX.validate("out/sitemap.xml")
    locs = [loc.text for loc in ET.parse("out/sitemap.xml").getroot().iter(f"{NS}loc")]
    assert locs == [f"https://cdn.ex.com/maps/sitemap-{n}.xml" for n in (1, 2, 3)]
    parts = []
    for name in written[:-1]:
        URLSET.validate(name)
        parts.append(entries(name))
    assert [len(part) for part in parts] == [3, 3, 1]
    assert [entry for part in parts for entry in part] == URLS  # & and < escaped, read back
    assert sorted(os.listdir(out)) == [
        "sitemap-1.xml",
        "sitemap-2.xml",
        "sitemap-3.xml",
        "sitemap.xml",
    ]


def test_split_at_the_byte_limit() -> None:
    one = len(sitemap_documents(URLS[:1])[0])
    entry = one - len(sitemap_documents([])[0])  # every entry of URLS is as long
    documents = sitemap_documents(URLS, max_bytes=one + entry)  # two entries fit exactly
    assert [len(entries_of(doc)) for doc in documents] == [2, 2, 2, 1]
    assert [len(doc) for doc in documents] == [one + entry] * 3 + [one]
    assert len(sitemap_documents(URLS, max_bytes=one + entry - 1)) == 7
    assert len(sitemap_documents(URLS)) == 1
    empty = sitemap_documents([])
    assert empty == [sitemap_documents([])[0]] and b"<urlset" in empty[0]


def test_files_appear_whole_or_not_at_all(out: Path) -> None:
    Path("out/sitemap.xml").write_text("old")
    Path("out/sitemap-2.xml").mkdir()  # the second part cannot be written
    with pytest.raises(OSError):
        write_sitemaps(URLS, "out/sitemap.xml", base_url="https://ex.com/", max_urls=3)
    assert Path("out/sitemap.xml").read_text() == "old"
    assert sorted(os.listdir(out)) == ["sitemap-2.xml", "sitemap.xml"]  # no temporary file


def test_bad_output_is_a_one_line_error(serve: ServeFn, capsys: pytest.CaptureFixture[str]) -> None:
    site = serve(seo_app())
    assert main(["crawl", site.url, "--state", "s.db", "-q", "--max-pages", "3"]) == 0
    capsys.readouterr()
    assert main(["sitemap", "s.db", "-o", "nowhere/sitemap.xml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sitecrawl: error: cannot write sitemap") and err.count("\n") == 1
    assert main(["sitemap", "s.db", "--base-url", "ftp://x"]) == 2
    assert main(["sitemap", "s.db", "-o", "-"]) == 2
    assert main(["sitemap", "missing.db"]) == 2
