"""A crawl's start (issue 30, items 6 and 8): a start that cannot be reached says what happened
(not "robots.txt unreachable") with its own kind and leaves no state file; the default state
file is named by host and scope, so crawling a folder after the root gets a file of its own."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp
import pytest

from servers import ServerThread
from sitecrawl import ConnectError, DNSError, FetchTimeout, RobotsUnreachable
from sitecrawl._cli import main
from sitecrawl.fetch import RobotsRules
from sitecrawl.fetch._fetcher import _map_errors


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_https_to_a_plain_http_server_says_so_and_leaves_no_state(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``crawl 127.0.0.1:PORT`` is taken as https; the server speaks plain HTTP."""
    bare = f"127.0.0.1:{site.port}"
    assert main(["crawl", bare, "--retries", "0", "-o", "out.jsonl"]) == 1
    err = capsys.readouterr().err
    hint = f"the server does not speak TLS; did you mean http://127.0.0.1:{site.port}/?"
    assert err.splitlines()[-1] == f"sitecrawl: error: could not crawl https://{bare}/: {hint}"
    assert "robots.txt" not in err
    (record,) = records(tmp_path / "out.jsonl")
    assert (record["error_kind"], record["error"]) == ("connect", hint)
    assert not list(tmp_path.glob("*.sitecrawl.db*"))


def test_a_dead_port_says_connection_refused_and_leaves_no_state(
    unused_tcp_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{unused_tcp_port}/"
    assert main(["crawl", url, "--retries", "0", "-o", "out.jsonl"]) == 1
    err = capsys.readouterr().err
    refused = f"connection refused (127.0.0.1:{unused_tcp_port})"
    assert err.splitlines()[-1] == f"sitecrawl: error: could not crawl {url}: {refused}"
    (record,) = records(tmp_path / "out.jsonl")
    assert (record["error_kind"], record["error"]) == ("connect", refused)
    assert not list(tmp_path.glob("*.sitecrawl.db*"))
    # An existing state file (a crawl of the site that once answered) is kept.
    state = tmp_path / "kept.sitecrawl.db"
    assert main(["crawl", url, "--retries", "0", "--state", str(state), "-q"]) == 1
    assert main(["crawl", url, "--retries", "0", "--state", str(state), "-q"]) == 1
    assert not state.exists()  # made by the failed run: removed, both times
    assert main(["crawl", url, "--ignore-robots", "--retries", "0", "-q"]) == 1
    assert not list(tmp_path.glob("*.sitecrawl.db*"))


def test_a_crawl_that_got_an_answer_keeps_its_state(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crawl", site.url + "/nope", "-q"]) == 1  # a 404: the site answered
    assert len(list(tmp_path.glob("*.sitecrawl.db"))) == 1


class _Key:
    host, port, ssl = "nowhere.test", 80, False


def test_a_name_that_does_not_resolve_is_dns_in_plain_words() -> None:
    url = "http://nowhere.test/robots.txt"
    raised = aiohttp.ClientConnectorDNSError(_Key(), OSError(-2, "Name or service not known"))
    with pytest.raises(DNSError) as caught, _map_errors(url):
        raise raised
    assert str(caught.value) == "could not resolve host nowhere.test (Name or service not known)"
    assert caught.value.unreached


def test_robots_txt_of_a_host_not_reached_fails_its_pages_as_the_host_did() -> None:
    """robots.txt could not be fetched because the host could not be reached at all: its
    pages fail as it did (``dns``, ``connect``), not as ``robots_unreachable``; robots.txt
    that timed out or answered 5xx still keeps them out as ``robots_unreachable``."""
    page = "http://nowhere.test/docs/"
    for failure in (
        DNSError("could not resolve host nowhere.test", url="x", unreached=True),
        ConnectError("connection refused (nowhere.test:80)", url="x", unreached=True),
    ):
        rules = RobotsRules.from_fetch("sitecrawl", None, None, error=failure)
        assert not rules.allowed(page)
        refusal = rules.refusal(page)
        assert (type(refusal), str(refusal), refusal.url) == (type(failure), str(failure), page)
    for error in (
        FetchTimeout("timeout", url="x"),
        ConnectError("server disconnected", url="x"),  # it was reached, then lost
    ):
        rules = RobotsRules.from_fetch("sitecrawl", None, None, error=error)
        refusal = rules.refusal(page)
        assert type(refusal) is RobotsUnreachable and refusal.url == page
        assert str(refusal) == f"robots.txt unreachable ({error})"
    refusal = RobotsRules.from_fetch("sitecrawl", 503, None).refusal(page)
    assert type(refusal) is RobotsUnreachable


def test_the_default_state_is_named_by_host_and_scope(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Crawling a folder after the root (in the same folder) used to exit 2: the one file
    per host held another start URL."""
    root = f"127.0.0.1_{site.port}.sitecrawl.db"
    assert main(["crawl", site.url, "-n", "3", "-q"]) == 0
    assert main(["crawl", site.url + "/p/", "-n", "2"]) == 1  # /p/ itself is a 404
    err = capsys.readouterr().err
    (folder,) = [p.name for p in tmp_path.glob("*.sitecrawl.db") if p.name != root]
    assert folder.startswith(f"127.0.0.1_{site.port}-p-") and f"state: {folder}\n" in err
    assert main(["crawl", site.url + "/p/1", "-n", "2", "--scope", "site", "-q"]) == 0
    assert main(["crawl", site.url + "/p/1", "-n", "3", "--scope", "site"]) == 0
    err = capsys.readouterr().err
    assert "resuming crawl 1: 2 pages done" in err  # the same command: the same file
    names = sorted(p.name for p in tmp_path.glob("*.sitecrawl.db"))
    assert len(names) == 3 and root in names
    assert [n for n in names if "-p-1-" in n and "-site-" not in n]  # site: its default scope


#: Modules of features a plain crawl does not use: a crawl imports them only when asked for
#: (together they were ~5 % of a 5,000-page crawl's event loop instructions; RESULTS §28).
FEATURE_MODULES = {
    "sitecrawl.frontier._redis": "Redis frontier",
    "sitecrawl.frontier._redis_shards": "Redis shards",
    "sitecrawl.sinks._warc": "WARC output",
    "sitecrawl.sinks._wacz": "WACZ output",
    "sitecrawl.parse._pdf": "PDF reading (ctypes)",
    "sitecrawl.parse._structured": "structured data",
    "zipfile": "WACZ output",
    "sitecrawl.parse._signature": "near-duplicates",
    "sitecrawl.render._extras": "screenshots and axe-core",
    "sitecrawl.serve._app": "the server (starlette)",
    "starlette": "the server",
    "mcp": "the MCP tools",
    "fastwarc": "WARC output",
    # a run registers only its own command's options (RESULTS §37: a third of the start-up)
    "sitecrawl._cli._serve": "the serve command",
    "sitecrawl.serve": "the server's options",
    "sitecrawl._cli._mcp": "the mcp command",
    "sitecrawl._cli._screenshot": "the screenshot command",
    "sitecrawl._cli._check": "the check command",
    "sitecrawl.sinks._warc_records": "WARC records (the check that warcio is there)",
}


def test_a_plain_crawl_imports_no_feature_it_does_not_use(site: ServerThread) -> None:
    """The crawl runs in a fresh interpreter (``-p 1``: no parser child), as the command line
    does, and lists what it imported."""
    import subprocess
    import sys

    script = (
        "import runpy, sys\n"
        f"sys.argv = ['sitecrawl', 'crawl', {site.url + '/'!r}, '-q', '-p', '1', '--no-state',"
        " '-o', 'out.jsonl']\n"
        "try:\n    runpy.run_module('sitecrawl', run_name='__main__')\n"
        "except SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "print('\\n'.join(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    imported = set(done.stdout.split())
    assert "sitecrawl._crawler" in imported  # it crawled
    assert len(records(Path("out.jsonl"))) == 60
    assert {m: why for m, why in FEATURE_MODULES.items() if m in imported} == {}
