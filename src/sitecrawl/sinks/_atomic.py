"""Files that appear whole or not at all.

Every file sitecrawl writes goes to a temporary file in the same directory, named
``.NAME.sitecrawl-tmp-PID`` (PID: the writing process), and is renamed over ``NAME``
(:func:`os.replace`, atomic) once complete and flushed to disk. Until then ``NAME`` keeps what
it held before; a failure removes the temporary file; a process killed outright (``kill -9``,
power cut) leaves it behind, recognisable by its name and safe to delete: the next run that
writes ``NAME`` removes every ``.NAME.sitecrawl-tmp-PID`` whose process no longer exists (a
running process's is left alone; so is one whose PID was since reused, until that one ends).
An error writing the temporary file that names no file (a full disk) is raised naming ``NAME``.

A path that exists and is not a regular file (``/dev/stdout``, a named pipe) cannot be replaced
and is written directly. A symbolic link is followed: the file it points to is replaced.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

#: Marks a temporary file in its name: ``.pages.csv.sitecrawl-tmp-1234``.
TEMP_MARK = ".sitecrawl-tmp-"


class Replacement:
    """A file being written at :attr:`temp`, to replace :attr:`path` on :meth:`commit`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        target = os.path.realpath(self.path)
        self._direct = os.path.exists(target) and not os.path.isfile(target)
        if self._direct:
            self.temp = target
        else:
            directory, name = os.path.split(target)
            self.temp = os.path.join(directory, f".{name}{TEMP_MARK}{os.getpid()}")
            remove_stale(target)
        self._target = target
        self._done = False

    @property
    def direct(self) -> bool:
        """Written in place, not replaced: a special file (``/dev/stdout``, a named pipe)."""
        return self._direct

    def commit(self) -> None:
        """Flush the (closed) temporary file to disk and rename it over the final path."""
        if self._done:
            return
        self._done = True
        if self._direct:
            return
        with undoing(self._remove, self.path):
            fd = os.open(self.temp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(self.temp, self._target)

    def discard(self) -> None:
        """Remove the temporary file; the final path keeps what it held."""
        if not self._done:
            self._done = True
            if not self._direct:
                self._remove()

    def _remove(self) -> None:
        # not there: nothing to do (a read-only folder says EROFS even then)
        if os.path.lexists(self.temp):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temp)


@contextmanager
def undoing(undo: Callable[[], None], path: str) -> Iterator[None]:
    """Run ``undo`` when the block raises (Ctrl-C included); an ``OSError`` is re-raised
    naming ``path`` (:func:`located`)."""
    try:
        yield
    except OSError as exc:
        undo()
        raise located(exc, path) from exc
    except BaseException:
        undo()
        raise


def located(exc: OSError, path: str) -> OSError:
    """``exc`` naming ``path`` when it names no file (a write's or a flush's error: a full
    disk), so that the message says which file."""
    if exc.filename is not None or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, path)


def remove_stale(path: str) -> list[str]:
    """Remove the temporary files of ``path`` (``.NAME.sitecrawl-tmp-PID`` beside it) whose
    process is gone: left by a run killed outright. Return the names removed."""
    directory, name = os.path.split(path)
    prefix = f".{name}{TEMP_MARK}"
    try:
        names = os.listdir(directory or ".")
    except OSError:  # an unreadable directory: opening the temporary file will say why
        return []
    removed = []
    for found in names:
        pid = found[len(prefix) :]
        if found.startswith(prefix) and pid.isascii() and pid.isdigit() and not running(int(pid)):
            with contextlib.suppress(OSError):  # gone meanwhile, not ours, a read-only folder
                os.unlink(os.path.join(directory, found))
                removed.append(found)
    return removed


def running(pid: int) -> bool:
    """Whether a process ``pid`` runs (this one included; a zombie, killed and not yet
    reaped, does not)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    except OverflowError:  # not a PID at all
        return False
    try:  # Linux: its state follows the name in parentheses (which may hold a parenthesis)
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[:1] != [b"Z"]
    except OSError:  # no /proc (not Linux), or it ended meanwhile
        return True


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path beside ``path``: when the block ends normally, what was written
    there replaces ``path``; when it raises (Ctrl-C included), it is removed.

    ::

        with replacing("out.parquet") as temp:
            pyarrow.parquet.write_table(table, temp)
    """
    replacement = Replacement(path)
    with undoing(replacement.discard, replacement.path):
        yield replacement.temp
    replacement.commit()


@contextmanager
def open_replacing(
    path: str | os.PathLike[str], mode: str = "w", **options: Any
) -> Iterator[IO[Any]]:
    """:func:`open` for writing (``mode`` ``"w"`` or ``"wb"``, ``options`` as for
    :func:`open`), through :func:`replacing`: the file appears at ``path``, closed and whole,
    when the block ends normally, and not at all when it raises.

    Raises ``OSError`` when the temporary file cannot be created (a missing directory, no
    permission)."""
    with replacing(path) as temp, open(temp, mode, **options) as out:
        yield out
