"""``sitecrawl serve`` run as a real subprocess on a free loopback port, and a small JSON
client for it (the standard library's: nothing between the test and the wire)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servers import checkout_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Answer:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    def json(self) -> Any:
        return json.loads(self.body)


class Server:
    """A ``sitecrawl serve`` subprocess on ``data``."""

    def __init__(self, data: Path, *args: str, token: str | None = None) -> None:
        self.data = data
        self.token = token
        self.port = free_port()
        self.args = args
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        argv = [sys.executable, "-m", "sitecrawl", "serve", "--port", str(self.port)]
        argv += ["--data", str(self.data), *self.args]
        if self.token:
            argv += ["--token", self.token]
        self.log = self.data.parent / f"{self.data.name}.serve-{self.port}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                argv, env=checkout_env(), stdout=subprocess.DEVNULL, stderr=log
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.log.read_text()
                raise RuntimeError(f"server exited {self.process.returncode}: {err}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def request(
        self, method: str, path: str, body: Any = None, *, token: str | None = None
    ) -> Answer:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        given = token if token is not None else self.token
        if given:
            request.add_header("Authorization", f"Bearer {given}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return Answer(response.status, response.read(), dict(response.headers))
        except urllib.error.HTTPError as exc:
            with exc:
                return Answer(exc.code, exc.read(), dict(exc.headers))

    def get(self, path: str, **kwargs: Any) -> Answer:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Answer:
        return self.request("POST", path, body if body is not None else {}, **kwargs)

    def wait(self, crawl_id: str, *statuses: str, timeout: float = 60) -> dict[str, Any]:
        """The crawl once its status is one of ``statuses``."""
        deadline = time.monotonic() + timeout
        while True:
            crawl = self.get(f"/api/crawls/{crawl_id}").json()
            if crawl["status"] in statuses:
                return dict(crawl)
            if time.monotonic() > deadline:
                raise AssertionError(f"crawl still {crawl['status']}: {crawl}")
            time.sleep(0.05)
