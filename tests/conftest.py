from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from aiohttp import web

from servers import ServerThread, site_app

ServeFn = Callable[[web.Application], ServerThread]


@pytest.fixture
def serve() -> Iterator[ServeFn]:
    """Start any aiohttp app on 127.0.0.1; stopped at the end of the test."""
    started: list[ServerThread] = []

    def start(app: web.Application) -> ServerThread:
        server = ServerThread(app).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def site(serve: ServeFn) -> ServerThread:
    """The 60-page generated site."""
    return serve(site_app(60))
