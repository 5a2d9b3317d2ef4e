"""Crash and interrupt a real crawl (a subprocess), resume it, and check that the store ends up
with exactly the pages of an uninterrupted crawl, each once, and that at most the requests in
flight at the kill were fetched twice."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ServeFn
from servers import ServerThread, checkout_env, expected_paths, site_app
from sitecrawl._cli import main

PAGES = 100
CONCURRENCY = 4
VOLATILE = ("response_time_ms", "depth")  # timing, and BFS depth under concurrency
#: Counted by `export` once the crawl has ended; the crawl's own -o leaves them empty.
AFTER_THE_CRAWL = ("inlinks", "unique_inlinks")


@pytest.fixture(scope="module")
def slow_site() -> Iterator[ServerThread]:
    server = ServerThread(site_app(PAGES, delay=0.02)).start()
    yield server
    server.stop()


def records(path: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        assert record["url"] not in out, f"{record['url']} twice"
        out[record["url"]] = {
            k: v for k, v in record.items() if k not in VOLATILE + AFTER_THE_CRAWL
        }
    return out


@pytest.fixture(scope="module")
def uninterrupted(
    slow_site: ServerThread, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("baseline") / "pages.jsonl"
    assert main(["crawl", slow_site.url, "--no-state", "-o", str(out), "-q"]) == 0
    baseline = records(out)
    assert {url.removeprefix(slow_site.url) or "/" for url in baseline} == expected_paths(PAGES)
    return baseline


def crawl_argv(site: ServerThread, state: Path, *extra: str) -> list[str]:
    command = ["crawl", site.url, "--state", str(state), "-c", str(CONCURRENCY), *extra]
    return [sys.executable, "-m", "sitecrawl", *command]


def crawl(site: ServerThread, state: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        crawl_argv(site, state, "-o", "-"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        cwd=state.parent,
    )


def page_fetches(site: ServerThread) -> list[str]:
    return [p for p in site.traffic.paths if p == "/" or p.startswith("/p/")]


def wait_for_pages(process: subprocess.Popen[str], count: int) -> None:
    assert process.stdout is not None
    for _ in range(count):
        line = process.stdout.readline()
        assert line, f"crawl ended early: {process.communicate()[1]}"


def wait_for_stderr(process: subprocess.Popen[str], text: str) -> str:
    """Read the process's stderr until a line holds ``text``; return what was read."""
    assert process.stderr is not None
    seen = ""
    while text not in seen:
        line = process.stderr.readline()
        assert line, f"no {text!r} on stderr: {seen}"
        seen += line
    return seen


def resume_and_export(site: ServerThread, state: Path) -> dict[str, dict[str, Any]]:
    result = subprocess.run(
        crawl_argv(site, state, "-q"),
        capture_output=True,
        text=True,
        timeout=60,
        env=checkout_env(),
        cwd=state.parent,
    )
    assert result.returncode == 0, result.stderr
    out = state.parent / "export.jsonl"
    assert main(["export", str(state), "-o", str(out), "-q"]) == 0
    return records(out)


@pytest.mark.parametrize("after", [1, PAGES // 2, PAGES - 5], ids=["early", "middle", "late"])
def test_kill_9_then_resume(
    after: int,
    slow_site: ServerThread,
    uninterrupted: dict[str, dict[str, Any]],
    tmp_path: Path,
) -> None:
    start = len(page_fetches(slow_site))
    process = crawl(slow_site, tmp_path / "s.db")
    wait_for_pages(process, after)
    process.kill()
    assert process.wait(10) == -signal.SIGKILL
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    process.stderr.close()
    assert resume_and_export(slow_site, tmp_path / "s.db") == uninterrupted
    fetched = page_fetches(slow_site)[start:]
    assert set(fetched) == expected_paths(PAGES)
    assert len(fetched) <= PAGES + CONCURRENCY  # only what was in flight is fetched again


def test_ctrl_c_exits_130_says_how_to_resume_and_resumes(
    slow_site: ServerThread, uninterrupted: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    start = len(page_fetches(slow_site))
    process = crawl(slow_site, tmp_path / "s.db")
    wait_for_pages(process, PAGES // 3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "interrupted: run the same command again to resume (" in err
    assert "Traceback" not in err
    assert resume_and_export(slow_site, tmp_path / "s.db") == uninterrupted
    fetched = page_fetches(slow_site)[start:]
    # Requests in flight at Ctrl-C were finished and recorded: nothing is fetched twice.
    assert sorted(fetched) == sorted(expected_paths(PAGES))


def test_second_ctrl_c_abandons_in_flight_requests_which_resume_fetches(
    serve: ServeFn, tmp_path: Path
) -> None:
    pages = 24
    quick = threading.Event()  # set for the resumed crawl
    site = serve(site_app(pages, delay=1.0, until=quick))
    process = crawl(site, tmp_path / "s.db")
    wait_for_pages(process, 2)  # the start page, then one of the first wave
    process.send_signal(signal.SIGINT)
    # The second Ctrl-C once the first was taken (two signals sent at once may arrive as
    # one); the requests started after the first wave still have most of their second to go.
    seen = wait_for_stderr(process, "stopping: finishing requests in flight")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    err = seen + err
    assert process.returncode == 130, err
    assert "interrupted: run the same command again to resume (" in err
    done_first = len(out.splitlines())
    assert done_first < len(page_fetches(site))  # some requests were abandoned ...
    quick.set()
    exported = resume_and_export(site, tmp_path / "s.db")
    assert {url.removeprefix(site.url) or "/" for url in exported} == expected_paths(pages)
    fetched = page_fetches(site)
    assert set(fetched) == expected_paths(pages)
    assert len(fetched) <= pages + CONCURRENCY  # ... and fetched again, once
