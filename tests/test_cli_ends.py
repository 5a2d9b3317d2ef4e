"""How a command ends when the machine fails its output (issue 30, items 2 and 18): a reader of
stdout that goes away (``| head``) ends every command quietly with exit 141; a full disk (the
kernel's ENOSPC from ``/dev/full``, EFBIG from ``RLIMIT_FSIZE``) is one line and exit 1. No
traceback, no temporary file left, and the state resumes."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import resource
import subprocess
import sys
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import pytest
from aiohttp import web

from conftest import ServeFn
from servers import ServerThread, checkout_env, expected_paths, site_app
from sitecrawl._cli import main
from sitecrawl.sinks import TEMP_MARK

PAGES = 150


def sitecrawl(
    cwd: Path, *argv: str, stdout: object = subprocess.PIPE, **options: object
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sitecrawl", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env=checkout_env(),
        cwd=cwd,
        **options,  # type: ignore[call-overload]
    )


def paths_of(path: Path) -> set[str]:
    """The URL paths of a JSON Lines output, checking each page is there once."""
    urls = [json.loads(line)["url"] for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(set(urls)) == len(urls)
    return {urlsplit(url).path for url in urls}


def resumes_whole(site: ServerThread, cwd: Path) -> None:
    """The same crawl run again on its state file finishes it, with every page once."""
    argv = ["crawl", site.url, "--state", "s.db", "-o", "all.jsonl"]
    done = subprocess.run(
        [sys.executable, "-m", "sitecrawl", *argv],
        capture_output=True,
        text=True,
        env=checkout_env(),
        cwd=cwd,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr
    assert "crawl 2" not in done.stderr  # the same crawl, not a new one
    assert paths_of(cwd / "all.jsonl") == expected_paths(PAGES)


def no_temporary_files(directory: Path) -> bool:
    return not [name for name in os.listdir(directory) if TEMP_MARK in name]


def test_crawl_into_a_closed_pipe_ends_quietly_and_resumes(serve: ServeFn, tmp_path: Path) -> None:
    """``sitecrawl crawl URL -o - | head -n 1``: exit 141, nothing on stderr but the state
    line (was: a 56-75-line ExceptionGroup traceback and exit 1); the other output is left as
    it was and the state file resumes."""
    site = serve(site_app(PAGES, delay=0.01))
    process = sitecrawl(tmp_path, "crawl", site.url, "--state", "s.db", "-o", "-", "-o", "x.csv")
    assert process.stdout is not None and process.stderr is not None
    assert json.loads(process.stdout.readline())["url"] == site.url + "/"
    process.stdout.close()  # head has read its line
    assert process.wait(60) == 141
    err = process.stderr.read()
    process.stderr.close()
    assert err.splitlines() == ["state: s.db"]
    assert not (tmp_path / "x.csv").exists() and no_temporary_files(tmp_path)
    resumes_whole(site, tmp_path)


@pytest.fixture
def changed_state(tmp_path: Path) -> Iterator[Path]:
    """A state file of two crawls of a site whose 80 page titles all changed between them."""
    version = {"n": 1}

    async def page(request: web.Request) -> web.Response:
        n = int(request.match_info.get("n", 0))
        links = "".join(f'<a href="/p/{k}">{k}</a>' for k in range(80)) if n == 0 else ""
        text = f"<title>Page {n} v{version['n']}</title>{links}"
        return web.Response(text=text, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    app.router.add_get("/p/{n}", page)
    server = ServerThread(app).start()
    state = tmp_path / "s.db"
    try:
        for number in (1, 2):
            version["n"] = number
            assert main(["crawl", server.url, "--state", str(state), "-q", "--no-sitemaps"]) == 0
    finally:
        server.stop()
    yield state


@contextlib.contextmanager
def stdout_to(stdout: TextIO) -> Iterator[None]:
    """``sys.stdout`` is ``stdout`` inside (set in the test: pytest's capture, resumed when the
    test begins, would take it back from a fixture)."""
    saved, sys.stdout = sys.stdout, stdout
    try:
        yield
    finally:
        sys.stdout = saved
        with contextlib.suppress(OSError):  # what it still buffers cannot be written either
            stdout.close()


def closed_pipe() -> TextIO:
    """A pipe whose reader has gone (``| head -1`` after its line)."""
    reader, writer = os.pipe()
    os.close(reader)
    return open(writer, "w", encoding="utf-8")


@pytest.mark.parametrize(
    "argv",
    [
        ["diff", "{state}"],  # was: a traceback
        ["diff", "{state}", "-o", "-"],
        ["export", "{state}", "-o", "-"],  # was: exit 2, the usage code
        ["export", "{state}", "-t", "links", "-o", "-", "-o", "{dir}/links.csv"],
    ],
)
def test_every_command_ends_quietly_when_stdout_is_closed(
    argv: list[str],
    changed_state: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = changed_state.read_bytes()
    values = {"state": str(changed_state), "dir": str(changed_state.parent)}
    with stdout_to(closed_pipe()):
        assert main([arg.format(**values) for arg in argv]) == 141
    assert "error" not in capsys.readouterr().err
    assert changed_state.read_bytes() == before  # read only, and whole
    assert not (changed_state.parent / "links.csv").exists()
    assert no_temporary_files(changed_state.parent)


def test_a_closed_pipe_elsewhere_is_not_a_quiet_end(
    changed_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken pipe that is not stdout's or stderr's is a failure, raised as it is."""
    from sitecrawl._cli import _export

    def broken(coroutine: Coroutine[Any, Any, int]) -> int:
        coroutine.close()
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(_export, "run_async", broken)
    with pytest.raises(BrokenPipeError):
        main(["export", str(changed_state), "-o", "-"])


def test_a_full_disk_is_one_line_and_the_state_resumes(serve: ServeFn, tmp_path: Path) -> None:
    """``-o`` on a full disk: the kernel's ENOSPC (``/dev/full``) mid-crawl is one line and
    exit 1 (was: a 94-222-line ExceptionGroup traceback); the crawl resumes."""
    site = serve(site_app(PAGES, delay=0.01))
    (tmp_path / "out.jsonl").symlink_to("/dev/full")
    process = sitecrawl(tmp_path, "crawl", site.url, "--state", "s.db", "-o", "out.jsonl", "-q")
    _, err = process.communicate(timeout=100)
    assert process.returncode == 1, err
    assert err == "sitecrawl: error: no space left on device writing out.jsonl\n"
    resumes_whole(site, tmp_path)


def limit_file_size() -> None:
    limit = 20_000
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@pytest.mark.parametrize("output", ["pages.csv", "pages.jsonl", "pages.json"])
def test_a_file_too_large_is_one_line_and_no_file(
    output: str, serve: ServeFn, tmp_path: Path
) -> None:
    """The kernel's EFBIG (``RLIMIT_FSIZE``) writing an output's temporary file: one line
    naming the output, exit 1, the output not created and its temporary file removed."""
    site = serve(site_app(PAGES))
    argv = ["crawl", site.url, "--no-state", "-q", "-o", output]
    process = sitecrawl(tmp_path, *argv, preexec_fn=limit_file_size)
    _, err = process.communicate(timeout=100)
    assert process.returncode == 1, err
    assert err == f"sitecrawl: error: file too large writing {output}\n"
    assert os.listdir(tmp_path) == []


def test_a_state_file_at_its_size_limit_is_one_line_and_resumes(
    serve: ServeFn, tmp_path: Path
) -> None:
    """The state file on a disk that refuses it more (the kernel's EFBIG under
    ``RLIMIT_FSIZE``; SQLite says only "disk I/O error", inside the TaskGroup's group): one
    line naming it, exit 1 (was: a traceback); the crawl resumes."""
    site = serve(site_app(PAGES))

    def limit() -> None:  # not a multiple of SQLite's pages: it writes up to the limit
        resource.setrlimit(resource.RLIMIT_FSIZE, (150_001, 150_001))

    process = sitecrawl(tmp_path, "crawl", site.url, "--state", "s.db", "-q", preexec_fn=limit)
    _, err = process.communicate(timeout=100)
    assert (process.returncode, err) == (1, "sitecrawl: error: file too large writing s.db\n")
    resumes_whole(site, tmp_path)


@pytest.mark.parametrize(
    "argv",
    [
        ["export", "{state}", "-o", "-"],
        ["export", "{state}", "-o", "{dir}/full.jsonl"],
        ["diff", "{state}"],
        ["diff", "{state}", "-o", "{dir}/full.csv"],
        ["report", "{state}", "-o", "{dir}/full.html"],
    ],
)
def test_commands_writing_to_a_full_disk(
    argv: list[str],
    changed_state: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every command writing to a full disk (stdout or ``-o`` on ``/dev/full``): one line, exit
    1 (``export`` said "cannot write output", exit 2, the usage code)."""
    directory = changed_state.parent
    for name in ("full.jsonl", "full.csv", "full.html"):
        (directory / name).symlink_to("/dev/full")
    with stdout_to(open("/dev/full", "w", encoding="utf-8")):
        code = main([arg.format(state=changed_state, dir=directory) for arg in argv])
    where = argv[-1].format(dir=directory) if argv[-1].startswith("{dir}") else "stdout"
    assert code == 1
    # diff says how many changes first
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == f"sitecrawl: error: no space left on device writing {where}"


def test_a_corrupt_state_file_is_one_line(
    changed_state: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``diff`` and ``report`` of a state file corrupt in any one of its pages: the error line
    and nothing after it (was: a traceback of a diff's side left open, "Cannot operate on a
    closed database", printed when it was collected)."""
    unraisable: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda what: unraisable.append(repr(what)))
    whole = changed_state.read_bytes()
    page = 4096
    assert len(whole) % page == 0
    corrupt = changed_state.parent / "corrupt.db"
    refused = 0
    for number in range(1, len(whole) // page):  # the first page: not a state file at all
        start = number * page + 100
        corrupt.write_bytes(whole[:start] + b"\x07" * 3000 + whole[start + 3000 :])
        for argv in (
            ["diff", str(corrupt)],
            ["report", str(corrupt), "-o", str(corrupt.parent / "r.html")],
        ):
            code = main(argv)
            gc.collect()
            err = capsys.readouterr().err
            if code != 0:
                refused += 1
                assert code == 2 and err.startswith("sitecrawl: error: "), (number, err)
                assert err.count("\n") == 1, (number, err)
            assert unraisable == [], (number, argv)
    assert refused > 10
