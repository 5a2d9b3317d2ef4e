"""Output files of the commands: checked before anything is opened, sinks put in place whole
when the command ends (:mod:`sitecrawl.sinks`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ._common import UsageError
from ._ends import machine_failure

if TYPE_CHECKING:
    from .._config import CrawlConfig
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


def check_outputs(
    paths: Sequence[str], *, crawl: bool = False, pages: bool = True, archives: bool = False
) -> None:
    """A :class:`UsageError` for an output of unknown format or given twice (``-o - -o -``),
    before anything is opened. A table's formats (``export``), or with ``crawl`` any sink's
    suffix (:data:`sitecrawl.sinks.SINKS`). ``pages``: the outputs of pages' content
    (``DIR/``, ``llms.txt``, ``llms-full.txt``) are known too; ``archives``: WARC and WACZ
    outputs are accepted (a crawl's)."""
    from .._exceptions import ConfigError
    from ..sinks import check_outputs as check_tables
    from ..sinks import check_sinks, is_archive, is_page_output

    def known(path: str) -> bool:
        return (pages and is_page_output(path)) or (archives and is_archive(path))

    try:
        if crawl:
            check_sinks(paths, known)
        else:
            check_tables(paths, known=known)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def markdown_for_outputs(config: CrawlConfig, paths: Sequence[str]) -> CrawlConfig:
    """``config`` with ``--markdown`` on when an output holds each page's Markdown (``DIR/``,
    ``llms-full.txt``): asking for the files asks for their content. Without the markdown
    extra, a :class:`UsageError` naming the install command."""
    from dataclasses import replace

    from .._exceptions import ConfigError
    from ..parse import require_markdown
    from ..sinks import needs_markdown

    if config.markdown or not any(needs_markdown(path) for path in paths):
        return config
    try:
        require_markdown()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return replace(config, markdown=True)


@contextmanager
def open_sinks(
    paths: Sequence[str],
    *,
    extract: Sequence[Rule] = (),
    csv_markdown: bool = False,
    base_url: str | None = None,
    archive: Mapping[str, Any] | None = None,
) -> Iterator[list[Sink]]:
    """The sinks of ``paths``. Each file is written beside its path (:mod:`sitecrawl.sinks`)
    and put in place, whole, when the block ends normally; when it raises, none is, and every
    path keeps what it held. A path that cannot be written is a :class:`UsageError`. With
    custom extraction rules, CSV and Parquet get a column per rule (CSV the Markdown only with
    ``csv_markdown``); a Parquet file that wrote a value as null (not of its rule's type) says
    how many on stderr. ``base_url``: the crawl's start URL (whose host's pages go at the top
    of a ``DIR/``). ``archive``: the options of the WARC and WACZ outputs
    (:func:`sitecrawl.sinks.archive_sink`); without it, those are refused."""
    from .._exceptions import ConfigError
    from ..sinks import sink_for

    check_outputs(paths, crawl=True, archives=archive is not None)
    sinks: list[Sink] = []
    try:
        for path in paths:
            try:
                sink = sink_for(
                    path,
                    extract=extract,
                    csv_markdown=csv_markdown,
                    base_url=base_url,
                    archive=archive,
                )
                sinks.append(sink)
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
    from ..sinks import Replacement, is_page_output

    if is_page_output(path) and path.endswith(("/", os.sep)):  # a folder of Markdown files
        folder = path.rstrip("/" + os.sep) or os.sep
        if os.path.isdir(folder):
            path = os.path.join(folder, "index.md")  # a file in it can be written
        elif os.path.lexists(folder):
            raise UsageError(f"cannot write output: Not a directory ({path})")
        else:
            path = folder  # it can be made
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
