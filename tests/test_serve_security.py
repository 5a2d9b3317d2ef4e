"""``sitecrawl serve``'s guards: the bearer token on every request but the UI's page, no
other address than loopback without a token, ``--allow-hosts``, only http(s), and the one
line a missing extra gets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ServeFn
from serve_server import Server
from servers import checkout_env, site_app
from sitecrawl._cli import main

TOKEN = "s3cret-token"


def test_every_request_needs_the_token(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(site_app(3))
    server = Server(tmp_path / "data", token=TOKEN).start()
    try:
        for path in (
            "/api/crawls",
            "/openapi.json",
            "/api/crawls/x/pages",
            "/api/monitors",
            "/mcp",
        ):
            for token in ("", "wrong", TOKEN + "x", TOKEN[:-1]):
                answer = server.get(path, token=token or "-")
                assert answer.status == 401, (path, token)
                assert answer.headers["www-authenticate"].startswith("Bearer")
        refused = server.post("/api/crawls", {"url": site.url + "/"}, token="wrong")
        assert refused.status == 401 and not site.traffic.paths  # nothing was crawled
        assert server.get("/api/crawls").status == 200  # with the token
        created = server.post("/api/crawls", {"url": site.url + "/"})
        assert created.status == 201
        # The UI's page and files open without it (no data in them); the page asks for it.
        assert server.get("/", token="-").status == 200
        assert server.get("/ui/app.js", token="-").status == 200
        assert server.request("POST", "/", {}, token="-").status == 401
    finally:
        server.stop()


def test_no_token_needed_on_loopback_without_one(tmp_path: Path) -> None:
    server = Server(tmp_path / "data").start()
    try:
        assert server.get("/api/crawls").json() == []
    finally:
        server.stop()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "::"])
def test_another_address_without_a_token_refuses_to_start(
    host: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--host", host, "--data", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs a token" in err and "Traceback" not in err


def test_the_token_comes_from_the_environment_too(tmp_path: Path) -> None:
    data = tmp_path / "data"
    argv = [sys.executable, "-m", "sitecrawl", "serve", "--host", "0.0.0.0", "--port", "1"]
    done = subprocess.run(
        [*argv, "--data", str(data), "--max-crawls", "0"],
        env=checkout_env(SITECRAWL_TOKEN=TOKEN),
        capture_output=True,
        text=True,
        timeout=60,
    )
    # past the token check: the next bad option is what it says
    assert done.returncode == 2 and "at least 1" in done.stderr and "token" not in done.stderr


def test_allow_hosts_limits_what_api_callers_crawl(serve: ServeFn, tmp_path: Path) -> None:
    site = serve(site_app(3))
    server = Server(tmp_path / "data", "--allow-hosts", "localhost,*.example.test").start()
    try:
        other = server.post("/api/crawls", {"url": site.url + "/"})  # 127.0.0.1
        assert other.status == 403 and "127.0.0.1" in other.json()["error"]
        local = f"http://localhost:{site.port}/"
        wider = server.post("/api/crawls", {"url": local, "scope": "subdomains"})
        assert wider.status == 403 and "scope" in wider.json()["error"]
        for url in ("ftp://localhost/", "file:///etc/passwd", "javascript:alert(1)"):
            assert server.post("/api/crawls", {"url": url}).status in (400, 403), url
        assert not site.traffic.paths
        allowed = server.post("/api/crawls", {"url": local, "max_depth": 0})
        assert allowed.status == 201
        assert server.wait(allowed.json()["id"], "finished")["pages"] == 1
        assert server.get("/api/crawls").json()[0]["url"] == local
    finally:
        server.stop()


def test_without_the_extra_one_line_names_the_install_command(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['starlette'] = None; sys.modules['uvicorn'] = None\n"
        "from sitecrawl._cli import main\n"
        f"sys.exit(main(['serve', '--data', {str(tmp_path)!r}]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=checkout_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert (
        done.stderr
        == "sitecrawl: error: sitecrawl serve needs its extra: pip install 'sitecrawl[serve]'\n"
    )


def test_one_server_per_data_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = Server(tmp_path / "data").start()
    try:
        assert main(["serve", "--data", str(tmp_path / "data"), "--port", "1"]) == 2
        err = capsys.readouterr().err
        assert err == f"sitecrawl: error: another sitecrawl serve uses {tmp_path / 'data'}\n"
        assert server.get("/api/crawls").status == 200  # the first one goes on
    finally:
        server.stop()
