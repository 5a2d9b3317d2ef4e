#!/usr/bin/env python3
"""Serve the generated bench site with nginx on 127.0.0.1 (default port 8088).

A minimal nginx.conf is generated in a per-port state dir
(``$TMPDIR/sitecrawl-bench-nginx-PORT``); nothing system-wide is touched.

    python bench/serve_site.py run     # foreground, Ctrl-C stops
    python bench/serve_site.py start   # background (pidfile in the state dir)
    python bench/serve_site.py stop

Library use (run_bench.py): ``with NginxServer(root, port): ...``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType

DEFAULT_ROOT = Path(__file__).resolve().parent / "site"
DEFAULT_PORT = 8088

CONF_TEMPLATE = """\
{user}worker_processes 1;
pid {state}/nginx.pid;
error_log {state}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    types {{ text/html html; text/plain txt; application/json json; }}
    default_type application/octet-stream;
    {access_log}
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    client_body_temp_path {state}/client_body;
    proxy_temp_path {state}/proxy;
    fastcgi_temp_path {state}/fastcgi;
    uwsgi_temp_path {state}/uwsgi;
    scgi_temp_path {state}/scgi;
    server {{
        listen 127.0.0.1:{port}{tls};
        root {root};
        index index.html;
    }}
}}
"""


def state_dir(port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"sitecrawl-bench-nginx-{port}"


def write_conf(
    root: Path,
    port: int,
    access_log: Path | None = None,
    log_format: str = "$msec $request_uri",
    tls: tuple[Path, Path] | None = None,
) -> Path:
    """Write nginx.conf for ``root``/``port`` into the state dir and return its path.
    ``access_log``: log each request there, by default as ``<epoch seconds, ms> <uri>``
    (timeline.py). ``tls``: (certificate chain, key) PEM files: https:// on that port (HTTP/1.1,
    nginx's default protocols and ciphers, one TLS session cache for the workers)."""
    nginx = shutil.which("nginx")
    if nginx is None:
        sys.exit("nginx not found (apt-get install -y nginx-light)")
    if not (root / "index.html").is_file():
        sys.exit(f"{root}/index.html missing: run bench/gen_site.py first")
    state = state_dir(port)
    state.mkdir(parents=True, exist_ok=True)
    conf = state / "nginx.conf"
    # As root, nginx workers would otherwise drop to "nobody" and may not read the site.
    user = "user root;\n" if os.geteuid() == 0 else ""
    log = (
        f'log_format t "{log_format}"; access_log {access_log.resolve()} t;'
        if access_log
        else "access_log off;"
    )
    ssl = ""
    if tls is not None:
        cert, key = (path.resolve() for path in tls)
        ssl = (
            f" ssl;\n        ssl_certificate {cert};\n        ssl_certificate_key {key};\n"
            "        ssl_session_cache shared:SSL:10m"
        )
    conf.write_text(
        CONF_TEMPLATE.format(
            user=user, state=state, port=port, root=root.resolve(), access_log=log, tls=ssl
        )
    )
    return conf


def nginx_argv(conf: Path, daemon: bool) -> list[str]:
    state = conf.parent
    return [
        "nginx", "-p", str(state), "-c", str(conf), "-e", str(state / "error.log"),
        "-g", f"daemon {'on' if daemon else 'off'};",
    ]  # fmt: skip


def wait_listening(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not start listening on 127.0.0.1:{port}") from None
            time.sleep(0.05)


def port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class NginxServer:
    """Context manager running nginx in the foreground as a child process."""

    def __init__(
        self,
        root: Path = DEFAULT_ROOT,
        port: int = DEFAULT_PORT,
        access_log: Path | None = None,
        log_format: str = "$msec $request_uri",
        tls: tuple[Path, Path] | None = None,
    ) -> None:
        self.root = root
        self.tls = tls
        self.port = port
        self.access_log = access_log
        self.log_format = log_format
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> NginxServer:
        if port_in_use(self.port):
            raise RuntimeError(f"127.0.0.1:{self.port} is already in use")
        conf = write_conf(self.root, self.port, self.access_log, self.log_format, self.tls)
        self.proc = subprocess.Popen(nginx_argv(conf, daemon=False))
        try:
            wait_listening(self.port)
        except RuntimeError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGQUIT)  # graceful shutdown
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def exit_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so ``with NginxServer(...)`` blocks stop nginx."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def cmd_start(root: Path, port: int, tls: tuple[Path, Path] | None = None) -> None:
    if port_in_use(port):
        sys.exit(f"127.0.0.1:{port} is already in use")
    conf = write_conf(root, port, tls=tls)
    subprocess.run(nginx_argv(conf, daemon=True), check=True)
    wait_listening(port)
    print(
        f"nginx serving {root} on http://127.0.0.1:{port}/ (stop: {sys.argv[0]} stop --port {port})"
    )


def cmd_stop(port: int) -> None:
    pidfile = state_dir(port) / "nginx.pid"
    try:
        pid = int(pidfile.read_text())
    except (FileNotFoundError, ValueError):
        sys.exit(f"no nginx pidfile at {pidfile}; not running?")
    try:
        os.kill(pid, signal.SIGQUIT)
    except ProcessLookupError:
        print(f"nginx (pid {pid}) was not running")
        return
    deadline = time.monotonic() + 10
    while port_in_use(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    print(f"nginx (pid {pid}) stopped")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("run", "start", "stop"))
    ap.add_argument(
        "--root", type=Path, default=DEFAULT_ROOT, help=f"site directory (default {DEFAULT_ROOT})"
    )
    ap.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT})"
    )
    ap.add_argument(
        "--tls",
        nargs=2,
        type=Path,
        metavar=("CERT", "KEY"),
        help="serve https:// with this certificate chain and key (tests/tls_ca.py makes them)",
    )
    args = ap.parse_args()
    tls = tuple(args.tls) if args.tls else None
    if args.action == "start":
        cmd_start(args.root, args.port, tls)
    elif args.action == "stop":
        cmd_stop(args.port)
    else:
        exit_on_sigterm()
        with NginxServer(args.root, args.port, tls=tls):
            print(f"nginx serving {args.root} on http://127.0.0.1:{args.port}/ (Ctrl-C to stop)")
            with contextlib.suppress(KeyboardInterrupt):
                signal.pause()


if __name__ == "__main__":
    main()
