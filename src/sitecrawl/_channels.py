"""A child process of the crawl (a parser, the archive's writer): its two channels to the
event loop, jobs in and answers out; its environment; its death with the crawl.

With 256 requests in flight the event loop writes jobs and reads answers only between long
batches of callbacks, so what a channel holds decides how far the child can run ahead on its
own: a job carries a whole body (~25 KB on the bench site), and 64 KiB (a default pipe) or
~208 KB (a default socket buffer, what uvloop's subprocess pipes are) left the child idle
for much of each batch while the pages waited for it (``bench/RESULTS.md`` section 16).

The jobs go through a socket pair whose send buffer holds :data:`JOBS_BUFFER` bytes when the
system allows that much (``net.core.wmem_max``), else through a pipe of :data:`PIPE_SIZE`
bytes (``F_SETPIPE_SZ``; 1 MiB is Linux's default limit without privileges); answers, a few
KB each, through a pipe of :data:`PIPE_SIZE` bytes. A larger pipe is no faster: its pages
cycle through more memory than a socket's buffers, which are freed as they are read.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Iterator

try:
    import fcntl
except ImportError:  # not on Windows
    fcntl = None  # type: ignore[assignment]

#: What the jobs' socket should hold: every body of 256 requests in flight.
JOBS_BUFFER = 8 << 20
#: What a pipe should hold (the default is 64 KiB).
PIPE_SIZE = 1 << 20


def _pipe() -> tuple[int, int]:
    """``(read end, write end)`` of a new pipe holding :data:`PIPE_SIZE` bytes where the
    system allows it (else it keeps its size)."""
    read_end, write_end = os.pipe()
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # (None without fcntl: not on Windows)
    if set_size is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(write_end, set_size, PIPE_SIZE)
    return read_end, write_end


def jobs_channel() -> tuple[int, int]:
    """``(the child's end, the event loop's end)`` of a new jobs channel, as descriptors: a
    socket pair when its send buffer can hold more than a pipe, else a pipe."""
    with contextlib.suppress(OSError):
        loop_end, child_end = socket.socketpair()
        with loop_end, child_end:
            loop_end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, JOBS_BUFFER)
            # Linux doubles the size asked for (bookkeeping) and caps it at twice wmem_max.
            if loop_end.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) > 2 * PIPE_SIZE:
                return child_end.detach(), loop_end.detach()
    return _pipe()


def answers_channel() -> tuple[int, int]:
    """``(the child's end, the event loop's end)`` of a new answers channel: a pipe."""
    read_end, write_end = _pipe()
    return write_end, read_end


@contextlib.contextmanager
def child_channels() -> Iterator[tuple[tuple[int, int], tuple[int, int]]]:
    """A jobs and an answers channel for a child about to be started in the block: yields
    ``(the child's ends, the event loop's ends)``, each ``(jobs, answers)``. The child's ends
    are closed when the block ends (the child has its own copies); ours too when it raised
    (the child did not start)."""
    jobs_child, jobs = jobs_channel()
    answers_child, answers = answers_channel()
    try:
        yield (jobs_child, answers_child), (jobs, answers)
    except BaseException:
        os.close(jobs)
        os.close(answers)
        raise
    finally:
        os.close(jobs_child)
        os.close(answers_child)


def child_env() -> dict[str, str]:
    """The environment with this very sitecrawl first on ``PYTHONPATH``, so a child runs the
    same code (and reads the same frames) as its parent, whatever is installed."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [package_root, *filter(None, [os.environ.get("PYTHONPATH")])]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def die_with_parent(parent: int) -> None:
    """On Linux, have the kernel kill this process when ``parent`` (the crawler) dies: a
    crawler killed outright (``kill -9``) left its child running a rule that never ends, at
    100 % CPU, for good. (Elsewhere the child ends when it next reads its closed stdin.)"""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the kernel was told
        os._exit(0)
