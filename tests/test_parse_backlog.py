"""Where pages get parsed when the parser process has a backlog: the event loop parses one
itself only while its child is busy, and at most one between two answers it has read."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys

import pytest

from servers import checkout_env
from sitecrawl._channels import PIPE_SIZE, answers_channel, jobs_channel
from sitecrawl.parse import Parser

PAGE = b"<title>t</title><main><h1>h</h1>" + b"<p>words and <a href='/x'>links</a></p>" * 400


async def _ready(parser: Parser) -> None:
    [child] = parser._children
    while not child.ready:
        await asyncio.sleep(0.01)


async def test_a_burst_of_pages_goes_to_the_child_not_all_to_the_loop() -> None:
    """Pages that finish in one moment (dozens at ``-c 64``): with only a backlog, every page
    past it was parsed on the loop, one after the other, while the child idled with its
    answers unread. Now the loop parses one, and the rest wait for the child."""
    async with Parser(2, backlog=12) as parser:
        await _ready(parser)
        pages = await asyncio.gather(
            *(parser.parse(PAGE, None, f"http://site.test/{i}") for i in range(100))
        )
        assert all(page.h1 == "h" for page in pages)
        assert parser.parsed_here + parser.parsed_by_children == 100
        assert parser.parsed_here <= 2, parser.parsed_here


async def test_the_loop_parses_while_the_child_is_busy() -> None:
    """A steady stream faster than one child keeps both busy: the loop takes some pages
    (at most one between two of the child's answers), the child most."""
    async with Parser(2, backlog=2) as parser:
        await _ready(parser)

        async def stream(i: int) -> None:
            await asyncio.sleep(i * 0.0005)
            await parser.parse(PAGE, None, f"http://site.test/{i}")

        await asyncio.gather(*(stream(i) for i in range(200)))
        assert parser.parsed_here + parser.parsed_by_children == 200
        assert 0 < parser.parsed_here <= parser.parsed_by_children + 1


async def test_without_a_ready_child_the_loop_parses() -> None:
    async with Parser(1) as parser:
        data = await parser.parse(PAGE, None, "http://site.test/")
        assert data.h1 == "h" and parser.parsed_here == 1


def _capacity(fd: int) -> int:
    """Bytes written to ``fd`` before a write would block (nobody reads the other end)."""
    os.set_blocking(fd, False)
    chunk, total = b"x" * 65536, 0
    while True:
        try:
            total += os.write(fd, chunk)
        except BlockingIOError:
            return total


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="channel sizes are Linux's")
def test_the_channels_hold_a_megabyte_or_more() -> None:
    """A job carries a whole body: 64 KiB (a default pipe) or ~208 KB (a default socket, what
    uvloop's subprocess pipes are) held a few pages, and at -c 256 the child idled between
    the event loop's turns. Both channels now hold at least PIPE_SIZE unread bytes."""
    for make, loop_end_writes in ((jobs_channel, True), (answers_channel, False)):
        child_end, loop_end = make()
        try:
            writer = loop_end if loop_end_writes else child_end
            assert _capacity(writer) >= PIPE_SIZE
        finally:
            os.close(child_end)
            os.close(loop_end)


async def test_a_child_reads_its_jobs_and_answers_through_them() -> None:
    """The parser process works over the channels: pages parsed by the child come back."""
    async with Parser(2) as parser:
        await _ready(parser)
        pages = await asyncio.gather(
            *(parser.parse(PAGE, None, f"http://site.test/{i}") for i in range(40))
        )
        assert [page.h1 for page in pages] == ["h"] * 40
        assert parser.parsed_by_children >= 39


async def test_a_close_cancelled_midway_still_closes_the_channels() -> None:
    """A second Ctrl-C can cancel the crawl while it waits for its parser process to end: our
    ends of the channels are closed all the same (an open one kept the event loop from
    closing: ``OSError: [Errno 16] Device or resource busy``)."""
    parser = Parser(2)
    await parser.__aenter__()
    await _ready(parser)
    [child] = parser._children
    closing = asyncio.create_task(parser.__aexit__(None, None, None))
    for _ in range(3):  # into close(): the child's stdin closed, its exit awaited
        await asyncio.sleep(0)
    assert child.process.returncode is None
    closing.cancel()
    with pytest.raises(asyncio.CancelledError):
        await closing
    assert child.jobs.is_closing()
    assert child._answers_transport.is_closing()
    await child.process.wait()


_CANCELLED_START = """
import asyncio, uvloop
from sitecrawl.parse._extraction import Extraction
from sitecrawl.parse._pool import Parser

async def main(delay):
    parser = Parser(2, extraction=Extraction.from_specs({"h": "css:h1"}))
    entering = asyncio.ensure_future(parser.__aenter__())
    await asyncio.sleep(delay)
    entering.cancel()
    try:
        await entering
    except asyncio.CancelledError:
        return
    await parser.__aexit__(None, None, None)

for delay in (0, 0, 0.0005, 0.001, 0.002, 0.005):
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(main(delay))
print("done")
"""


def test_a_start_cancelled_midway_leaves_no_process_behind() -> None:
    """A second Ctrl-C while a parser process starts: uvloop, cancelled in its
    ``subprocess_exec``, left the process to end after the event loop had closed ("Event
    loop is closed" and "unclosed resource" tracebacks at exit). Now the start finishes and
    the child is killed and waited for."""
    import uvloop  # the fast extra, which the tests install: this test is of its loop

    assert uvloop
    done = subprocess.run(
        [sys.executable, "-c", _CANCELLED_START],
        env=checkout_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout == "done\n" and done.stderr == "", done.stderr


@pytest.mark.parametrize("starts", [True, False], ids=["started", "failed"])
def test_child_channels_leave_no_descriptor_of_a_child_s_start(starts: bool) -> None:
    """The child's ends are closed once it has started (it has its own copies), and every
    end when the start failed: no descriptor leaks either way."""
    from sitecrawl._channels import child_channels

    def is_open(fd: int) -> bool:
        try:
            os.fstat(fd)
        except OSError:
            return False
        return True

    given: list[int] = []
    kept: list[int] = []
    with contextlib.suppress(RuntimeError), child_channels() as (theirs, ours):
        given, kept = list(theirs), list(ours)
        assert all(map(is_open, given + kept)) and len(set(given + kept)) == 4
        if not starts:
            raise RuntimeError("the child could not start")
    assert not any(map(is_open, given))
    assert [is_open(fd) for fd in kept] == [starts, starts]
    for fd in kept if starts else []:
        os.close(fd)
