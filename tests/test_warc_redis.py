"""Issue 33: a crawl in Redis archives as it goes, each worker into its own WARC series named
by the worker (``site-HOST-PID.warc.gz``), and ``export --warc`` gathers every worker's
segments and the crawl's pages into one WACZ that ``wacz validate`` accepts."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from warcio.archiveiterator import ArchiveIterator

from redis_server import shared_server
from servers import ServerThread, site_app
from sitecrawl._cli import main
from test_redis import finish, sitecrawl, status, wait_until

BIN = Path(sys.executable).parent
PAGES = 30


@pytest.fixture
def gate() -> threading.Event:
    opened = threading.Event()
    opened.set()
    return opened


@pytest.fixture
def slow_site(gate: threading.Event) -> Iterator[ServerThread]:
    server = ServerThread(site_app(PAGES, delay=0.05, gate=gate)).start()
    yield server
    server.stop()


def responses(path: Path) -> list[str]:
    with path.open("rb") as stream:
        return [
            record.rec_headers.get_header("WARC-Target-URI")
            for record in ArchiveIterator(stream, check_digests=True)
            if record.rec_type == "response"
        ]


def test_two_workers_write_their_own_series_and_export_gathers_one_wacz(
    slow_site: ServerThread,
    gate: threading.Event,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = shared_server()
    crawl_id = "warc-two"
    archive = tmp_path / "site.warc.gz"
    gate.clear()  # the site answers once both workers have joined: each gets a share
    try:
        seed = sitecrawl(
            "crawl", slow_site.url, "--redis", server.url, "--crawl-id", crawl_id, "--fresh",
            "-c", "2", "-q", "-o", str(archive),
        )  # fmt: skip
        client = redis.Redis(port=server.port)
        wait_until(lambda: bool(client.exists(f"sitecrawl:{{{crawl_id}}}:config")), 20, "seed")
        join = sitecrawl(
            "worker", "--redis", server.url, "--crawl-id", crawl_id, "-c", "2", "-q",
            "-o", str(archive),
        )  # fmt: skip
        wait_until(lambda: "2 workers alive" in status(server.url, crawl_id, capsys), 60, "2")
    finally:
        gate.set()
    finish([seed, join], timeout=120)

    series = sorted(tmp_path.glob("site-*.warc.gz"))
    names = {path.name for path in series}
    assert len(names) == 2, names  # one series per worker, named by host and pid
    assert {str(seed.pid), str(join.pid)} == {
        name.split("-")[-1][: -len(".warc.gz")] for name in names
    }
    assert not archive.exists()  # nothing written under the plain name
    assert not list(tmp_path.glob(".*sitecrawl-open*"))  # every segment closed, in place
    captured = [url for path in series for url in responses(path)]
    assert all(responses(path) for path in series)  # both workers archived pages
    pages = [url for url in captured if url.endswith("/") or "/p/" in url]  # not robots, sitemap
    assert len(pages) == len(set(pages)) == PAGES  # each page archived once, by one worker

    out = tmp_path / "site.wacz"
    capsys.readouterr()
    argv = ["export", "--redis", server.url, "--crawl-id", crawl_id, "--warc", str(archive)]
    assert main([*argv, "-o", str(out)]) == 0
    assert f"{PAGES} pages, 2 WARC files" in capsys.readouterr().err
    result = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(out) as package:
        inside = {name for name in package.namelist() if name.startswith("archive/")}
        assert inside == {f"archive/{name}" for name in names}
        index = package.read("indexes/index.cdx").decode().splitlines()
        listed: list[dict[str, Any]] = [
            json.loads(line) for line in package.read("pages/pages.jsonl").splitlines()[1:]
        ]
    assert {json.loads(line.split(" ", 2)[2])["url"] for line in index} >= set(pages)
    assert {entry["url"] for entry in listed} == set(pages)
    assert all(entry["title"] and entry["ts"].endswith("Z") for entry in listed)


def test_a_worker_killed_with_sigkill_keeps_its_pages_in_the_gathered_wacz(
    slow_site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker killed with ``kill -9`` leaves its segment open under a temporary name (its
    series is named by its pid: no later run of it closes it): ``export --warc`` cuts it to
    whole records and gathers it, so every page is in the WACZ."""
    server = shared_server()
    crawl_id = "warc-kill"
    archive = tmp_path / "site.warc.gz"
    client = redis.Redis(port=server.port)
    victim = sitecrawl(
        "crawl", slow_site.url, "--redis", server.url, "--crawl-id", crawl_id, "--fresh",
        "--lease-ttl", "2", "-c", "2", "-q", "-o", str(archive),
    )  # fmt: skip
    counts = f"sitecrawl:{{{crawl_id}}}:counts"
    wait_until(lambda: int(client.hget(counts, "done") or 0) >= 8, 60, "8 pages done")  # type: ignore[arg-type]
    victim.kill()
    victim.communicate()  # its pipe closed
    left = list(tmp_path.glob(".site-*.warc.gz.sitecrawl-open-*"))
    assert len(left) == 1  # its segment, open: not in place
    finisher = sitecrawl(
        "worker", "--redis", server.url, "--crawl-id", crawl_id, "-q", "-o", str(archive)
    )
    finish([finisher], timeout=120)
    capsys.readouterr()
    out = tmp_path / "site.wacz"
    argv = ["export", "--redis", server.url, "--crawl-id", crawl_id, "--warc", str(archive)]
    assert main([*argv, "-o", str(out)]) == 0
    assert f"{PAGES} pages, 2 WARC files" in capsys.readouterr().err
    assert not left[0].exists()  # recovered, renamed into place
    victims = [path for path in tmp_path.glob("site-*.warc.gz") if str(victim.pid) in path.name]
    assert len(victims) == 1 and responses(victims[0])  # whole records, digests right
    result = subprocess.run(
        [str(BIN / "wacz"), "validate", "-f", str(out)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(out) as package:
        listed = package.read("pages/pages.jsonl").splitlines()[1:]
    assert len({json.loads(line)["url"] for line in listed}) == PAGES


def test_a_redis_crawl_refuses_a_wacz_and_names_the_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "out.wacz")
    code = main(["crawl", "http://127.0.0.1:9/", "--redis", "redis://127.0.0.1:9/0", "-o", out])
    assert code == 2
    assert "export --redis URL --crawl-id ID --warc site.warc.gz" in capsys.readouterr().err


def test_export_warc_wants_one_wacz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["export", "--redis", "redis://127.0.0.1:9/0", "--crawl-id", "x", "--warc", "a.warc.gz"]
    assert main([*argv, "-o", str(tmp_path / "pages.csv")]) == 2
    assert "-o FILE.wacz" in capsys.readouterr().err
