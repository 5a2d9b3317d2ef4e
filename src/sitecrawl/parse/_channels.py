"""The two channels between the event loop and a parser process: jobs in, answers out.

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
import socket

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
