"""How a command ends when the machine around it fails its output, whatever the command and
wherever the failure surfaced (raised plainly, or inside the ``ExceptionGroup`` of a
``TaskGroup``): handled once, at the CLI's boundary (:func:`sitecrawl._cli.main`).

- The reader of stdout (or stderr) went away (``sitecrawl crawl URL -o - | head``): the command
  ends quietly, as a Unix tool killed by SIGPIPE would, with exit code 141 (128 + SIGPIPE), so a
  shell's ``pipefail`` still sees the output was cut short. The stream is pointed at
  ``/dev/null``, so Python's own flush at exit does not complain either.
- The disk is full, the file too large (``RLIMIT_FSIZE``) or a quota exceeded, writing an output
  (its writer names the path: :class:`sitecrawl.sinks.RowWriter`) or the state file (SQLite's
  ``SQLITE_FULL``, or an I/O error while its disk has no room or the file is at its size
  limit: SQLite does not pass the system's error on): one line, ``no space left on device
  writing PATH``, exit 1.

Anything else is not the machine's doing and goes on up. Either way the state file stays
whole: its transactions are SQLite's, and what was committed resumes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import sys
from collections.abc import Iterator
from typing import TextIO

#: A command whose reader went away: 128 + SIGPIPE, what a shell reports for ``yes | head``.
EXIT_PIPE = 141
EXIT_FATAL = 1
#: Less room than this (bytes) on a disk, or below a file size limit, explains SQLite's I/O error.
ROOM = 1 << 20

#: A write the disk refused, and what the error line says of it.
FULL = {
    errno.ENOSPC: "no space left on device",
    errno.EFBIG: "file too large",
    errno.EDQUOT: "disk quota exceeded",
}


def leaves(exc: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``exc``: itself, or every one its groups hold."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaves(inner)
    else:
        yield exc


def ending(exc: BaseException) -> int | None:
    """The exit code of a command that raised ``exc``, when ``exc`` (or one exception of its
    groups) is an output failure of the machine, having said what it is (nothing, for a
    closed pipe); None for anything else: the caller raises it on."""
    found = list(leaves(exc))
    if any(isinstance(leaf, BrokenPipeError) for leaf in found):
        broken = [stream for stream in (sys.stdout, sys.stderr) if _reader_gone(stream)]
        if broken:
            for stream in broken:
                _silence(stream)
            return EXIT_PIPE
    for leaf in found:
        message = _full(leaf)
        if message is not None:
            _say(message)
            return EXIT_FATAL
    return None


def _say(message: str) -> None:
    from .._terminal import printable

    with contextlib.suppress(OSError):  # stderr on the full disk: the exit code says it
        print(f"sitecrawl: error: {printable(message)}", file=sys.stderr)


def machine_failure(exc: OSError) -> bool:
    """Whether ``exc`` is the machine failing an output (a closed pipe, a full disk), not the
    command line naming one that cannot be: raise it on to :func:`ending`, not as a usage
    error."""
    return isinstance(exc, BrokenPipeError) or exc.errno in FULL


def _full(exc: BaseException) -> str | None:
    """``no space left on device writing PATH`` when ``exc`` is the disk refusing a write."""
    from .._exceptions import StateError

    if isinstance(exc, OSError) and exc.errno in FULL:
        where = exc.filename if exc.filename not in (None, "-") else "stdout"
        return f"{FULL[exc.errno]} writing {where}"
    if isinstance(exc, StateError):  # SQLite's own error, kept as the cause
        name = getattr(exc.__cause__, "sqlite_errorname", "")
        if name == "SQLITE_FULL":
            return f"{FULL[errno.ENOSPC]} writing {exc.path}"
        if name.startswith("SQLITE_IOERR"):
            reason = _no_room(exc.path)
            return None if reason is None else f"{FULL[reason]} writing {exc.path}"
    return None


def _no_room(path: str) -> int | None:
    """``ENOSPC`` when the disk of ``path`` is (all but) full, ``EFBIG`` when the file or its
    WAL is at this process's file size limit; None otherwise."""
    import resource

    try:
        disk = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return None
    if disk.f_bavail * disk.f_frsize < ROOM:
        return errno.ENOSPC
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY:
        for name in (path, path + "-wal"):
            with contextlib.suppress(OSError):
                if os.path.getsize(name) + ROOM > limit:
                    return errno.EFBIG
    return None


def _reader_gone(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a pipe or socket whose reader has closed it."""
    try:
        fd = stream.fileno() if stream is not None else -1
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO)
        return False
    if fd < 0:
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _silence(stream: TextIO) -> None:
    """Point ``stream``'s file descriptor at ``/dev/null``: what it still buffers goes nowhere,
    quietly, when Python flushes it at exit."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, stream.fileno())
    finally:
        os.close(null)
