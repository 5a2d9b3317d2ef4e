"""Where pages get parsed when the parser process has a backlog: the event loop parses one
itself only while its child is busy, and at most one between two answers it has read."""

from __future__ import annotations

import asyncio
import fcntl

import pytest

from sitecrawl.parse._child import PIPE_SIZE
from sitecrawl.parse._pool import Parser

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


@pytest.mark.skipif(not hasattr(fcntl, "F_GETPIPE_SZ"), reason="pipe sizes are Linux's")
async def test_the_childs_pipes_hold_a_megabyte() -> None:
    """Both pipes hold PIPE_SIZE bytes (64 KiB by default: two or three pages in, ~16
    answers out, while the event loop reads and writes them once an iteration)."""
    async with Parser(2) as parser:
        await _ready(parser)
        [child] = parser._children
        transport = child.process._transport  # type: ignore[attr-defined]
        for fd in (0, 1):
            pipe = transport.get_pipe_transport(fd).get_extra_info("pipe")
            assert fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ) >= PIPE_SIZE
