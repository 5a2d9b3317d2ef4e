"""Crawled text reaches the terminal with its control characters and bidi controls made
visible: the pure function on data, then every place that prints crawled or stored text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import ROOT, checkout_env, html
from sitecrawl import printable
from sitecrawl._cli import main
from sitecrawl._cli._redis import status_line
from sitecrawl._models import CrawlStats
from sitecrawl._progress import summary

ESC = "\x1b]0;owned\x07\x1b[2J"  # retitle the terminal, clear the screen
RLO = "\u202e"  # right-to-left override: the rest of the line shows backwards
HOSTILE = f"Docs{ESC} read{RLO}me.exe"
SHOWN = "Docs\\x1b]0;owned\\x07\\x1b[2J read\\u202eme.exe"


def assert_inert(text: str) -> None:
    """No control character but the line breaks, no bidi control."""
    for line in text.split("\n"):
        assert printable(line) == line, text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain text, ünïcödé, 日本語, עברית", "plain text, ünïcödé, 日本語, עברית"),
        (HOSTILE, SHOWN),
        ("a\x00b\tc\nd\re\x7f", "a\\x00b\\x09c\\x0ad\\x0de\\x7f"),
        ("csi\x9b2J nel\x85", "csi\\x9b2J nel\\x85"),  # C1 controls, as a header decodes them
        (
            "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c",
            "\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069\\u200e\\u200f\\u061c",
        ),
    ],
)
def test_printable_shows_control_and_bidi_characters_as_escapes(raw: str, shown: str) -> None:
    assert printable(raw) == shown
    assert printable(shown) == shown  # already printable: unchanged


def test_printable_returns_safe_text_itself() -> None:
    text = "nothing to escape here"
    assert printable(text) is text


def test_crawl_summary_and_redis_status_line_are_printable() -> None:
    stats = CrawlStats(pages=1, notes=[f"sitemap {HOSTILE}"])
    text = summary(stats)
    assert text.endswith(f"\nsitemap {SHOWN}")
    assert_inert(text)
    frontier = SimpleNamespace(crawl_id=f"id{ESC}", base_url=f"http://a.test/{RLO}")
    status = SimpleNamespace(
        seen=1, queued=0, in_flight=0, done=1, errors=0, workers=0, finished=True
    )
    line = status_line(frontier, status)  # type: ignore[arg-type]
    assert line.startswith("crawl id\\x1b]0;owned\\x07\\x1b[2J of http://a.test/\\u202e ")
    assert_inert(line)


def hostile_app() -> web.Application:
    """Hostile anchor text, alt text and title; a broken link and a broken image."""

    async def home(request: web.Request) -> web.Response:
        return html(
            f'<a href="/gone">{HOSTILE}</a><img src="/missing.png" alt="{HOSTILE}">',
            title=HOSTILE,
        )

    app = web.Application()
    app.router.add_get("/", home)
    return app


def test_check_prints_hostile_anchor_and_alt_text_escaped(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    site = serve(hostile_app())
    assert main(["check", site.url, "--retries", "0"]) == 1
    out, err = capsys.readouterr()
    assert f'    from {site.url}/ "{SHOWN}" [a]' in out.splitlines()
    assert f'    from {site.url}/ "{SHOWN}" [img]' in out.splitlines()
    assert_inert(out)
    assert_inert(err)


def test_main_py_prints_titles_escaped(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(hostile_app())
    result = subprocess.run(
        [sys.executable, str(Path(ROOT) / "main.py"), site.url, "1", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=checkout_env(),
    )
    assert result.returncode == 0, result.stderr
    assert f"200 {site.url}/ {SHOWN}" in result.stdout.splitlines()
    assert_inert(result.stdout)
