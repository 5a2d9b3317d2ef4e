"""Output files of the commands: checked before anything is opened, sinks put in place whole
when the command ends (:mod:`sitecrawl.sinks`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ._common import UsageError
from ._ends import machine_failure

if TYPE_CHECKING:
    from ..parse import Rule
    from ..sinks import Sink


def add_csv_markdown(parser: argparse.ArgumentParser) -> None:
    """``--csv-markdown``: CSV files keep the pages' ``markdown`` column."""
    parser.add_argument(
        "--csv-markdown",
        action="store_true",
        help="CSV outputs get the markdown column too (a page of text a cell: JSON Lines,"
        " JSON and Parquet always have it)",
    )


def check_outputs(paths: Sequence[str], *, crawl: bool = False) -> None:
    """A :class:`UsageError` for an output of unknown format or given twice (``-o - -o -``),
    before anything is opened. A table's formats (``export``), or with ``crawl`` any sink's
    suffix (:data:`sitecrawl.sinks.SINKS`)."""
    from .._exceptions import ConfigError
    from ..sinks import check_outputs as check_tables
    from ..sinks import check_sinks

    try:
        (check_sinks if crawl else check_tables)(paths)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


@contextmanager
def open_sinks(
    paths: Sequence[str], *, extract: Sequence[Rule] = (), csv_markdown: bool = False
) -> Iterator[list[Sink]]:
    """The sinks of ``paths``. Each file is written beside its path (:mod:`sitecrawl.sinks`)
    and put in place, whole, when the block ends normally; when it raises, none is, and every
    path keeps what it held. A path that cannot be written is a :class:`UsageError`. With
    custom extraction rules, CSV and Parquet get a column per rule (CSV the Markdown only with
    ``csv_markdown``); a Parquet file that wrote
    a value as null (not of its rule's type) says how many on stderr."""
    from .._exceptions import ConfigError
    from ..sinks import sink_for

    check_outputs(paths, crawl=True)
    sinks: list[Sink] = []
    try:
        for path in paths:
            try:
                sinks.append(sink_for(path, extract=extract, csv_markdown=csv_markdown))
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
