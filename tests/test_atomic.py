"""Files appear whole or not at all: :mod:`sitecrawl.sinks._atomic`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitecrawl.sinks import TEMP_MARK, open_replacing, replacing


def leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if TEMP_MARK in name)


def test_the_file_appears_only_when_complete(tmp_path: Path) -> None:
    out = tmp_path / "pages.csv"
    out.write_text("previous\n")
    with open_replacing(out, "w", encoding="utf-8") as handle:
        handle.write("new\n")
        handle.flush()
        assert out.read_text() == "previous\n"  # not yet
        assert leftovers(tmp_path) == [f".pages.csv{TEMP_MARK}{os.getpid()}"]
    assert out.read_text() == "new\n"
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("error", [ValueError("boom"), KeyboardInterrupt()])
def test_a_failure_keeps_the_previous_file(tmp_path: Path, error: BaseException) -> None:
    out = tmp_path / "report.html"
    out.write_text("previous")
    with pytest.raises(type(error)), replacing(out) as temp:
        Path(temp).write_text("half")
        raise error
    assert out.read_text() == "previous"
    assert leftovers(tmp_path) == []


def test_nothing_appears_when_there_was_nothing(tmp_path: Path) -> None:
    with pytest.raises(ValueError), open_replacing(tmp_path / "x.json", "wb") as handle:
        handle.write(b"[")
        raise ValueError
    assert os.listdir(tmp_path) == []


def test_a_symlink_is_followed(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "pages.jsonl"
    real.write_text("old")
    (tmp_path / "link.jsonl").symlink_to(real)
    with open_replacing(tmp_path / "link.jsonl", "w") as handle:
        handle.write("new")
    assert (tmp_path / "link.jsonl").is_symlink() and real.read_text() == "new"


def test_a_special_file_is_written_directly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with open_replacing(fifo, "w") as handle:
            handle.write("through the pipe")
        assert os.read(reader, 100) == b"through the pipe"
    finally:
        os.close(reader)
    assert leftovers(tmp_path) == []


def test_a_missing_directory_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), open_replacing(tmp_path / "no" / "x.csv"):
        pass


def test_the_temporary_files_of_gone_processes_are_removed(tmp_path: Path) -> None:
    """Left by runs killed outright (``kill -9``): the next one writing the same output
    removes those whose process no longer exists, not a running process's, nor another
    output's (issue 30, item 20: 235 MB after 10 kills)."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        left = {
            "gone": tmp_path / f".pages.csv{TEMP_MARK}{ended.pid}",
            "running": tmp_path / f".pages.csv{TEMP_MARK}{running.pid}",
            "other output": tmp_path / f".links.csv{TEMP_MARK}{ended.pid}",
            "not a temporary file": tmp_path / f".pages.csv{TEMP_MARK}x1",
        }
        for path in left.values():
            path.write_text("partial")
        with open_replacing(tmp_path / "pages.csv", "w") as handle:
            handle.write("whole")
        assert sorted(os.listdir(tmp_path)) == sorted(
            ["pages.csv", *(path.name for what, path in left.items() if what != "gone")]
        )
    finally:
        running.kill()
        running.wait()
