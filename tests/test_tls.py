"""https:// against a real TLS server on 127.0.0.1 whose certificate a test CA signs (made for
the test, :mod:`tls_ca`): trusted through ``--ca-bundle`` / ``ca_bundle=`` or
``SSL_CERT_FILE``, and without either a page whose ``error_kind`` is ``tls``."""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from servers import ServerThread, html
from sitecrawl import TLSError, crawl_site_async
from sitecrawl._cli import main
from sitecrawl._exceptions import ConfigError
from tls_ca import MadeCA, make_ca

PAGES = 12


def _site() -> web.Application:
    """Page i links (relative links: https:// as the page) home and to page i + 1."""

    async def page(request: web.Request) -> web.Response:
        i = int(request.match_info.get("i") or 0)
        links = '<a href="/">home</a>' + (f'<a href="/p/{i + 1}">next</a>' if i + 1 < PAGES else "")
        return html(f"<h1>Page {i}</h1><p>Hello over TLS.</p>{links}", title=f"Page {i}")

    async def robots(request: web.Request) -> web.Response:
        return web.Response(text="User-agent: *\nAllow: /\n")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/p/{i}", page)
    app.router.add_get("/robots.txt", robots)
    return app


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> MadeCA:
    return make_ca(tmp_path_factory.mktemp("ca"))


@pytest.fixture
def tls_site(test_ca: MadeCA) -> Iterator[ServerThread]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(test_ca.cert, test_ca.key)
    server = ServerThread(_site(), ssl_context=context).start()
    yield server
    server.stop()


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_the_library_crawls_https_with_its_ca_bundle(
    tls_site: ServerThread, test_ca: MadeCA
) -> None:
    pages = await crawl_site_async(tls_site.url + "/", ca_bundle=str(test_ca.ca))
    assert len(pages) == PAGES
    assert {page["status"] for page in pages.values()} == {200}
    assert all(page["url"].startswith("https://") for page in pages.values())


async def test_an_unknown_ca_is_a_tls_failure_not_a_crawl(tls_site: ServerThread) -> None:
    pages = await crawl_site_async(tls_site.url + "/")
    (page,) = pages.values()
    assert page["status"] is None and page["error_kind"] == TLSError.kind == "tls"
    assert "certificate" in page["error"] and "127.0.0.1" in page["error"], page["error"]
    assert tls_site.traffic.paths == []  # no request went out


def test_the_command_line_with_and_without_ca_bundle(
    tls_site: ServerThread,
    test_ca: MadeCA,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out.jsonl"
    argv = ["crawl", tls_site.url + "/", "--no-state", "-q", "--retries", "0", "-o", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert "TLS certificate of 127.0.0.1 not accepted" in err[-1], err
    (record,) = _records(out)
    assert record["error_kind"] == "tls"
    assert main([*argv, "--ca-bundle", str(test_ca.ca)]) == 0
    records = _records(out)
    assert len(records) == PAGES and {r["status"] for r in records} == {200}


def test_ssl_cert_file_is_trusted_by_default(
    tls_site: ServerThread, test_ca: MadeCA, tmp_path: Path
) -> None:
    """OpenSSL reads SSL_CERT_FILE when the default context is made (at start-up)."""
    out = tmp_path / "out.jsonl"
    env = dict(os.environ, SSL_CERT_FILE=str(test_ca.ca))
    argv = [sys.executable, "-m", "sitecrawl", "crawl", tls_site.url + "/", "--no-state", "-q"]
    subprocess.run([*argv, "-o", str(out)], env=env, check=True, timeout=120)
    assert len(_records(out)) == PAGES


def test_a_bad_ca_bundle_is_one_clear_error(
    tmp_path: Path, tls_site: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    for bundle, said in [
        (tmp_path / "missing.pem", "no such file"),
        (not_pem, "no CA certificate"),
    ]:
        argv = ["crawl", tls_site.url + "/", "--no-state", "-q", "--ca-bundle", str(bundle)]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"CA bundle {bundle}" in err and said in err, err
    assert tls_site.traffic.paths == []


async def test_a_bad_ca_bundle_given_to_the_library_is_a_config_error(
    tmp_path: Path, tls_site: ServerThread
) -> None:
    with pytest.raises(ConfigError, match="no such file"):
        await crawl_site_async(tls_site.url + "/", ca_bundle=str(tmp_path / "missing.pem"))
