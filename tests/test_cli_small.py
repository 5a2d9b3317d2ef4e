"""Smaller CLI defects of issue 30 (items 14 and 20): conflicting scope options, an output
refused before a state file is made, the Redis options in their group, a read-only state file
or folder said as such, ``status`` of a crawl not seeded yet."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from redis_server import shared_server
from servers import ServerThread
from sitecrawl import CrawlConfig
from sitecrawl._cli import build_parser, main
from sitecrawl._cli._common import run_async
from sitecrawl._cli._redis import frontier_for
from sitecrawl.frontier import encode
from sitecrawl.sinks import TEMP_MARK


def test_scope_and_subdomains_together_are_a_usage_error(
    site: ServerThread, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: accepted, the last one winning."""
    for argv in (["--scope", "prefix", "--subdomains"], ["--subdomains", "--scope", "domain"]):
        assert main(["crawl", site.url, "--no-state", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("sitecrawl: error: --scope and --subdomains disagree")
        assert err.count("\n") == 1
    assert site.traffic.paths == []
    # Alone, or with the same scope, it is --scope subdomains.
    argv = ["crawl", site.url, "--no-state", "-n", "1", "-q", "--subdomains"]
    assert main([*argv, "--scope", "subdomains"]) == main(argv) == 0


def test_an_output_that_cannot_be_written_leaves_no_state_file(
    site: ServerThread,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``-o nodir/x.csv`` is refused before the state file is made (was: made, then refused)."""
    monkeypatch.chdir(tmp_path)
    assert main(["crawl", site.url, "-o", "nodir/x.csv"]) == 2
    err = capsys.readouterr().err
    assert err == "sitecrawl: error: cannot write output: No such file or directory (nodir/x.csv)\n"
    assert os.listdir(tmp_path) == [] and site.traffic.paths == []


def test_a_named_pipe_output_is_not_opened_to_check_it(site: ServerThread, tmp_path: Path) -> None:
    """The check that an output can be written does not open a special file (opening a named
    pipe with no reader would wait for one forever)."""
    fifo = tmp_path / "pages.jsonl"
    os.mkfifo(fifo)
    lines: list[bytes] = []

    def read() -> None:
        with fifo.open("rb") as pipe:
            lines.extend(pipe)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert main(["crawl", site.url, "--no-state", "-q", "-n", "3", "-o", str(fifo)]) == 0
    reader.join(10)
    assert len(lines) == 3


def test_the_redis_options_are_in_the_redis_group() -> None:
    """``--lease-ttl`` and ``--redis-timeout`` were listed with the general options."""
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for command, options in (
        ("crawl", {"--lease-ttl", "--redis-timeout"}),
        ("worker", {"--redis-timeout"}),
    ):
        groups = {
            group.title: {flag for action in group._group_actions for flag in action.option_strings}
            for group in commands[command]._action_groups
        }
        assert options | {"--redis", "--crawl-id"} <= groups["distributed crawl (Redis)"]
        assert not options & groups["options"]


@pytest.fixture
def read_only(tmp_path: Path) -> Iterator[Path]:
    """A folder that cannot be written, whoever runs the test: a read-only bind mount of it
    for root (whom permissions do not stop), its mode for anyone else."""
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "s.db").write_bytes(b"")
    yield folder
    if os.geteuid() == 0:
        subprocess.run(["umount", str(folder)], check=False)
    os.chmod(folder, 0o755)


def make_read_only(folder: Path) -> None:
    if os.geteuid() == 0:
        for argv in (["--bind", str(folder), str(folder)], ["-o", "remount,ro,bind", str(folder)]):
            subprocess.run(["mount", *argv], check=True)
    else:
        os.chmod(folder / "s.db", 0o444)
        os.chmod(folder, 0o555)


def test_a_read_only_state_file_or_folder_says_so(
    site: ServerThread,
    read_only: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Was: "cannot read state file s.db: disk I/O error" for a read-only file, "unable to
    open database file" for a read-only working folder."""
    state = read_only / "s.db"
    state.unlink()
    assert main(["crawl", site.url, "--state", str(state), "-q", "-n", "2"]) == 0
    make_read_only(read_only)
    capsys.readouterr()
    monkeypatch.chdir(read_only)
    for argv, message in [
        (["crawl", site.url], "cannot create state file 127.0.0.1_"),
        (["crawl", site.url, "--state", "s.db"], "state file s.db is read-only"),
        (["export", "s.db", "-o", str(read_only.parent / "x.csv")], "state file s.db is read-only"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"sitecrawl: error: {message}"), err
        assert err.count("\n") == 1 and "disk I/O" not in err
        if argv[0] == "crawl":
            assert "--state PATH, or none: crawl --no-state" in err
        else:
            assert "copy it somewhere writable" in err
    assert main(["crawl", site.url, "--no-state", "-q", "-n", "1"]) == 0


def test_a_report_refused_in_a_read_only_folder_is_one_line(
    site: ServerThread, read_only: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was: a traceback (removing the trial file that could not be made said EROFS). A
    temporary file a killed run left there cannot be removed either: it stays, quietly."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    stale = read_only / f".r.html{TEMP_MARK}{ended.pid}"
    stale.write_text("partial")
    make_read_only(read_only)
    assert main(["crawl", site.url, "--no-state", "--report", str(read_only / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"sitecrawl: error: cannot write {read_only / 'r.html'}: ")
    assert err.count("\n") == 1 and stale.exists()


def test_status_of_a_crawl_not_seeded_yet_is_starting(
    site: ServerThread, capsys: pytest.CaptureFixture[str]
) -> None:
    """Right after ``crawl --redis`` creates the crawl, before its start URLs are added (while
    its crawler starts: parser processes, a browser), ``status`` said "finished, 0 done"."""
    server = shared_server()
    stored = encode(CrawlConfig(base_url=site.url))
    created = frontier_for(server.url, "unseeded", base_url=site.url, config=stored, fresh=True)

    async def create() -> None:
        async with created:
            pass

    run_async(create())
    capsys.readouterr()
    assert main(["status", "--redis", server.url, "--crawl-id", "unseeded"]) == 0
    line = capsys.readouterr().out
    assert "(starting): 0 done · 0 queued" in line and "finished" not in line
    assert main(["crawl", site.url, "--redis", server.url, "--crawl-id", "unseeded", "-q"]) == 0
    assert main(["status", "--redis", server.url, "--crawl-id", "unseeded"]) == 0
    assert "(finished): 60 done" in capsys.readouterr().out
