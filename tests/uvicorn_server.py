"""A real uvicorn server on a free 127.0.0.1 port, in its own thread and loop, for the ASGI
apps of ``sitecrawl.serve`` (the monitors' routes, the MCP tools over HTTP): the tests reach
them over loopback HTTP as any client would."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import uvicorn


class UvicornThread:
    def __init__(self, app: Any) -> None:
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
            ws="none",
            timeout_graceful_shutdown=5,
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0
        self.error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def _run(self) -> None:
        try:
            with asyncio.Runner() as runner:
                self.loop = runner.get_loop()
                runner.run(self.server.serve())
        except BaseException as exc:  # the test reads it
            self.error = exc

    def start(self) -> UvicornThread:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start: {self.error!r}")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(60)
        if self._thread.is_alive():
            import sys
            import traceback

            frame = sys._current_frames()[self._thread.ident]
            stack = "".join(traceback.format_stack(frame))

            async def tasks() -> str:
                out = []
                for task in asyncio.all_tasks():
                    out.append(repr(task))
                    for f in task.get_stack():
                        out.append("  " + "".join(traceback.format_stack(f, 1)))
                return "\n".join(out)

            stack += asyncio.run_coroutine_threadsafe(tasks(), self.loop).result(5)
            raise AssertionError(f"uvicorn did not stop:\n{stack}")
