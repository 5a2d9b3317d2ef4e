"""File sinks: a crawl's pages into CSV, JSON Lines, JSON or Parquet, through the format's
:class:`~._formats.RowWriter`, streaming; the file appears whole when the sink is closed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._models import Page
from ._base import Sink
from ._formats import FORMATS, RowWriter, check_outputs, format_of, open_writer
from ._page_outputs import is_markdown_dir, is_page_output, llms_kind
from ._tables import pages_table

if TYPE_CHECKING:
    from ..parse import Rule


class FileSink(Sink):
    """Pages into ``path`` in the format its extension names (``-``: JSON Lines on stdout).

    As a context manager: closed (the file put in place) when the block ends normally or is
    interrupted (Ctrl-C: the pages so far are whole records), discarded when it raises an
    error. ``ConfigError`` for an unknown extension, ``OSError`` when the file cannot be
    created."""

    FORMAT: str | None = None

    def __init__(
        self, path: str, *, extract: Sequence[Rule] = (), csv_markdown: bool = False
    ) -> None:
        self.path = path
        table = pages_table(extract, csv_markdown=csv_markdown)
        self._writer: RowWriter = open_writer(path, table, format=self.FORMAT)

    @property
    def unconverted(self) -> dict[str, int]:
        """Column -> values a Parquet file wrote as null: not of the rule's type."""
        return getattr(self._writer, "unconverted", {})

    def write(self, page: Page) -> None:
        self._writer.write(page.to_dict())

    def close(self) -> None:
        self._writer.close()

    def discard(self) -> None:
        """Drop what was written: the path keeps what it held before."""
        self._writer.discard()


class CsvSink(FileSink):
    """CSV whatever the extension: the course's columns first, then every page field."""

    FORMAT = ".csv"


class JsonlSink(FileSink):
    FORMAT = ".jsonl"


class JsonSink(FileSink):
    FORMAT = ".json"


class ParquetSink(FileSink):
    FORMAT = ".parquet"


#: ``(path, *, extract=rules, csv_markdown=False) -> Sink``: how a sink is made for an output
#: path (a sink that has no use for an option takes it all the same: ``**options``).
SinkFactory = Callable[..., Sink]

#: A crawl's output suffix (``-o PATH``) -> the sink that writes it: the one place a new
#: output of rows plugs in (:func:`sink_for` makes it, :func:`check_sinks` knows its suffix,
#: the crawl writes each page to it: :meth:`~sitecrawl.AsyncCrawler.run`). The table formats
#: are :class:`FileSink` over :data:`~._formats.FORMATS`' row writers. The outputs of the
#: pages' content are known by name (:mod:`._page_outputs`: ``DIR/``, ``llms.txt``,
#: ``llms-full.txt``).
SINKS: dict[str, SinkFactory] = dict.fromkeys(FORMATS, FileSink)


def check_sinks(paths: Sequence[str], known: Callable[[str], bool] = is_page_output) -> None:
    """Refuse, before anything is written, an output of no sink's suffix or one given twice
    (:class:`ConfigError`); ``known``: the outputs known by name (the pages' content by
    default; see :func:`~._formats.check_outputs`)."""
    check_outputs(paths, SINKS, known=known)


def sink_for(
    path: str,
    *,
    extract: Sequence[Rule] = (),
    csv_markdown: bool = False,
    base_url: str | None = None,
    archive: Mapping[str, Any] | None = None,
) -> Sink:
    """The sink that a path names: a path ending in ``/``, ``llms.txt`` and ``llms-full.txt``
    are the pages' content (:mod:`._page_outputs`; ``base_url``: the crawl's start URL), a
    ``.warc.gz``, ``.warc`` or ``.wacz`` a web archive when ``archive`` gives its options
    (:func:`~._archive.archive_sink`), any other path the sink of its suffix (:data:`SINKS`);
    ``-`` streams JSON Lines to stdout. With custom extraction rules, CSV and Parquet get one
    column per rule (``x:NAME``); CSV has the ``markdown`` column only with ``csv_markdown``.
    :class:`ConfigError` for an unknown suffix."""
    if is_markdown_dir(path):
        from ._markdown_files import MarkdownFiles

        return MarkdownFiles(path, base_url=base_url)
    if llms_kind(path) is not None:
        from ._llms import LlmsFile

        return LlmsFile(path, base_url=base_url)
    if archive is not None:
        from ._archive import archive_sink, is_archive

        if is_archive(path):
            return archive_sink(path, **archive)
    return SINKS[format_of(path, SINKS)](path, extract=extract, csv_markdown=csv_markdown)
