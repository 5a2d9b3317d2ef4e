"""Output files of the commands: checked before anything is opened, sinks put in place whole
when the command ends (:mod:`sitecrawl.sinks`), pages streamed from a store into them."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ._common import UsageError
from ._ends import machine_failure

if TYPE_CHECKING:
    from .._models import Page
    from ..parse import Rule
    from ..sinks import Sink


def check_outputs(paths: Sequence[str], *, archives: bool = False) -> None:
    """A :class:`UsageError` for an output of unknown format or given twice (``-o - -o -``),
    before anything is opened. ``archives``: WARC and WACZ outputs are accepted (a crawl's)."""
    from .._exceptions import ConfigError
    from ..sinks import check_outputs as check
    from ..sinks import is_archive

    try:
        check([path for path in paths if not (archives and is_archive(path))])
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if archives:
        check_archives([path for path in paths if is_archive(path)])


def check_archives(paths: Sequence[str]) -> None:
    """Each archive once (its segments are its own)."""
    import os

    seen = set()
    for path in paths:
        same = os.path.realpath(path)
        if same in seen:
            raise UsageError(f"output {path!r} is given twice")
        seen.add(same)


@contextmanager
def open_sinks(
    paths: Sequence[str], *, extract: Sequence[Rule] = (), archive: Mapping[str, Any] | None = None
) -> Iterator[list[Sink]]:
    """The sinks of ``paths``. Each file is written beside its path (:mod:`sitecrawl.sinks`)
    and put in place, whole, when the block ends normally; when it raises, none is, and every
    path keeps what it held. A path that cannot be written is a :class:`UsageError`. With
    custom extraction rules, CSV and Parquet get a column per rule; a Parquet file that wrote
    a value as null (not of its rule's type) says how many on stderr. ``archive``: the
    options of the WARC and WACZ outputs (:func:`sitecrawl.sinks.archive_sink`); without
    it, those are refused."""
    from .._exceptions import ConfigError
    from ..sinks import ArchiveSink, FileSink, archive_sink, is_archive, sink_for

    check_outputs(paths, archives=archive is not None)
    sinks: list[FileSink | ArchiveSink] = []
    try:
        for path in paths:
            try:
                if archive is not None and is_archive(path):
                    sinks.append(archive_sink(path, **archive))
                else:
                    sinks.append(sink_for(path, extract=extract))
            except (ConfigError, OSError) as exc:
                raise UsageError(f"cannot write output: {_reason(exc)} ({path})") from None
        yield list(sinks)
    except BaseException:
        for sink in sinks:
            sink.discard()
        raise
    for sink in sinks:
        try:
            sink.close()
        except OSError as exc:
            if machine_failure(exc):
                raise
            raise UsageError(f"cannot write output: {_reason(exc)} ({sink.path})") from None
        for column, count in sink.unconverted.items():
            print(
                f"{sink.path}: {column}: {count:,} values not of its type, written as null",
                file=sys.stderr,
            )


def check_writable(path: str, *, output: bool = False) -> None:
    """A :class:`UsageError` now, not after a crawl (nor after its state file was made), when
    ``path`` (``output``: a ``-o`` file) cannot be written: its temporary file cannot be
    created beside it. Nothing is left behind; a special file (a named pipe) is not opened."""
    from ..sinks import Replacement

    trial = Replacement(path)
    if trial.direct:
        return
    try:
        open(trial.temp, "ab").close()
    except OSError as exc:
        if output:
            raise UsageError(f"cannot write output: {_reason(exc)} ({path})") from None
        raise UsageError(f"cannot write {path}: {_reason(exc)}") from None
    finally:
        trial.discard()


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


async def write_pages(pages: AsyncIterable[Page], sinks: Sequence[Sink]) -> int:
    """Write every page (a :class:`~sitecrawl.frontier.PageStore`'s, streamed) to every sink;
    return how many pages."""
    count = 0
    async for page in pages:
        for sink in sinks:
            sink.write(page)
        count += 1
    return count
