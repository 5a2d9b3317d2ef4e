from __future__ import annotations

import subprocess
import sys

import sitecrawl
from servers import checkout_env

PROMISED = {
    "AsyncCrawler",
    "crawl_site_async",
    "extract_page_data",
    "normalize_url",
    "get_h1_from_html",
    "get_first_paragraph_from_html",
    "get_urls_from_html",
    "get_images_from_html",
    "SitecrawlError",
}


def test_all_is_sorted_and_complete() -> None:
    assert sitecrawl.__all__ == sorted(sitecrawl.__all__)
    assert set(sitecrawl.__all__) >= PROMISED
    assert set(sitecrawl.__all__) == {*sitecrawl._LAZY, "__version__"}
    for name in sitecrawl.__all__:
        assert getattr(sitecrawl, name) is not None


def test_every_error_derives_from_one_root() -> None:
    for name in sitecrawl.__all__:
        value = getattr(sitecrawl, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, sitecrawl.SitecrawlError)


def test_importing_sitecrawl_does_not_import_aiohttp() -> None:
    code = "import sys, sitecrawl, sitecrawl._cli; print('aiohttp' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=checkout_env(), check=True
    ).stdout
    assert out.strip() == "False"
