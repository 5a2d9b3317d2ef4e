"""A real ``redis-server`` for the tests, on a free 127.0.0.1 port (never the system's 6379).

A missing ``redis-server`` is an error, not a skip: CI installs it (``.ci/install-redis.sh``).
"""

from __future__ import annotations

import atexit
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """``persistent``: AOF in ``directory`` (survives :meth:`restart`); else nothing on disk."""

    def __init__(self, directory: Path, *, persistent: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (run .ci/install-redis.sh)")
        self.binary = binary
        self.directory = directory
        self.persistent = persistent
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        durability = (
            ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
            if self.persistent
            else ["--appendonly", "no", "--save", ""]
        )
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--daemonize",
                "no",
                *durability,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(64).startswith(b"+PONG"):
                        return self
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.terminate()  # SIGTERM: a clean shutdown (flushes the AOF)
            process.wait(10)

    def restart(self, pause: float = 0.0) -> None:
        self.stop()
        time.sleep(pause)
        self.start()


_shared: RedisServer | None = None


def shared_server() -> RedisServer:
    """One non-persistent server for the whole test session, started on first use."""
    global _shared
    if _shared is None:
        directory = Path(tempfile.mkdtemp(prefix="sitecrawl-redis-"))
        _shared = RedisServer(directory).start()
        atexit.register(_shared.stop)
        atexit.register(shutil.rmtree, directory, True)
    return _shared


_second: RedisServer | None = None


def second_server() -> RedisServer:
    """Another non-persistent server for the session (the second shard of sharded crawls)."""
    global _second
    if _second is None:
        directory = Path(tempfile.mkdtemp(prefix="sitecrawl-redis-"))
        _second = RedisServer(directory).start()
        atexit.register(_second.stop)
        atexit.register(shutil.rmtree, directory, True)
    return _second
