"""``sitecrawl export STATE.db [--table NAME] -o FILE``: write one table of a state file out
(pages, links, redirects, images, issues, chunks, structured_data; as .csv, .jsonl, .json,
.parquet); the pages' content too (``-o DIR/``, ``llms.txt``, ``llms-full.txt``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .._settings import count
from ._common import EXIT_OK, UsageError, run_async
from ._ends import machine_failure
from ._outputs import add_csv_markdown, check_outputs
from ._redis import check_source, store_command

if TYPE_CHECKING:
    from ..frontier import PageStore

TABLE_NAMES = (
    "pages",
    "links",
    "redirects",
    "images",
    "issues",
    "chunks",
    "structured_data",
    "near_duplicates",
)


def add_command(commands: Any) -> None:
    export = store_command(
        commands,
        "export",
        "write a table of a crawl's state file",
        _execute,
        output="write the table to FILE (.csv, .jsonl, .json, .parquet; - for JSONL on stdout;"
        " pages: also DIR/, llms.txt, llms-full.txt, see crawl -o); repeatable (default:"
        " STATE's name and the table's, STATE.TABLE.csv)",
        outputs=True,
    )
    export.add_argument(
        "-t",
        "--table",
        choices=TABLE_NAMES,
        default="pages",
        help="which table: pages (default), links, redirects, images, issues (every finding:"
        " docs/checks.md), chunks (each page's Markdown cut for retrieval: url, title, chunk,"
        " headings, text, tokens; needs a crawl with --markdown) or structured_data (crawled"
        " with --structured-data) or near_duplicates (crawled with --near-duplicates: url,"
        " cluster_id, similar_to, similarity)",
    )
    export.add_argument(
        "--chunk-tokens",
        type=count(1),
        metavar="N",
        help="-t chunks: at most N tokens a chunk (default 512; counted by an approximation"
        " of the OpenAI tokenizers, no download)",
    )
    export.add_argument(
        "--warc",
        metavar="FILE.warc.gz",
        help="gather the WARC archive FILE.warc.gz (its segments, and every Redis worker's"
        " series FILE-HOST-PID.warc.gz beside it) and the crawl's pages into one WACZ: -o X.wacz",
    )
    add_csv_markdown(export)


def _execute(args: argparse.Namespace) -> int:
    """Any table of a state file or a crawl in Redis (one :class:`PageStore` either way), any
    format, streamed: rows are written as the store's pages are read
    (:func:`sitecrawl.sinks._tables.store_rows`), never the whole crawl in memory (but the
    issues: the audit of the report's data, :func:`sitecrawl.report.store_issue_rows`). The
    files appear whole when every row is written: an export stopped (Ctrl-C, SIGTERM, an
    error) leaves each path as it was."""
    from .._exceptions import ConfigError
    from ..parse import stored_rules
    from ..report import store_issue_rows, store_near_duplicate_rows
    from ..sinks import (
        CHUNKS,
        DEFAULT_CHUNK_TOKENS,
        TABLES,
        is_page_output,
        pages_table,
        store_chunk_rows,
        store_rows,
        write_rows_async,
    )
    from ._outputs import open_sinks
    from ._store import default_output, open_store, source_name

    check_source(args)
    if args.warc is not None:
        return _gather(args)
    if args.chunk_tokens is not None and args.table != "chunks":
        raise UsageError("--chunk-tokens goes with -t chunks")
    args.output = args.output or [default_output(args, f"{args.table}.csv")]
    check_outputs(args.output, pages=args.table == "pages")
    pages_outputs = [path for path in args.output if is_page_output(path)]
    rows_outputs = [path for path in args.output if not is_page_output(path)]

    async def export() -> int:
        async with open_store(args) as store:
            try:
                count = 0
                # the content's files put in place once the table's are written too
                with open_sinks(pages_outputs, base_url=store.base_url) as sinks:
                    if sinks:
                        async for page in store.read_pages():
                            for sink in sinks:
                                sink.write(page)
                            count += 1
                    if rows_outputs:
                        count = await _write_table(store, rows_outputs)
                return count
            except ConfigError as exc:
                raise UsageError(str(exc)) from None
            except OSError as exc:
                if machine_failure(exc):
                    raise
                path = exc.filename or ", ".join(args.output)
                raise UsageError(f"cannot write output: {exc.strerror or exc} ({path})") from None

    async def _write_table(store: PageStore, paths: list[str]) -> int:
        if args.table == "chunks":
            tokens = args.chunk_tokens or DEFAULT_CHUNK_TOKENS
            return await write_rows_async(paths, CHUNKS, store_chunk_rows(store, tokens))
        if args.table == "issues":  # the audit of every page, not rows of each one
            return await write_rows_async(paths, TABLES["issues"], store_issue_rows(store))
        if args.table == "near_duplicates":
            rows = store_near_duplicate_rows(store)
            return await write_rows_async(paths, TABLES["near_duplicates"], rows)
        chosen = TABLES[args.table]
        if chosen.name == "pages":  # a column per extraction rule the crawl ran
            kept = (getattr(store, name, None) for name in ("options", "config"))
            found = [stored_rules(item) for item in kept if isinstance(item, dict)]
            rules = next((rules for rules in found if rules), ())
            chosen = pages_table(rules, csv_markdown=args.csv_markdown)
        return await write_rows_async(paths, chosen, store_rows(chosen, store))

    count = run_async(export())
    if not args.quiet:
        what = args.table if args.table in ("pages", "chunks") else f"{args.table} rows"
        where = "" if args.output == ["-"] else f": {', '.join(args.output)}"
        print(f"{count:,} {what} from {source_name(args)}{where}", file=sys.stderr)
    return EXIT_OK


def _gather(args: argparse.Namespace) -> int:
    """``export --warc FILE.warc.gz -o X.wacz``: one WACZ of every worker's segments and the
    crawl's HTML pages they captured (:func:`sitecrawl.sinks.gather_wacz`)."""
    from ..sinks import gather_wacz, wacz_entry
    from ._store import open_store, source_name

    if len(args.output) != 1 or not args.output[0].lower().endswith(".wacz"):
        raise UsageError("export --warc writes one WACZ package: -o FILE.wacz")
    if not args.warc.lower().endswith((".warc.gz", ".warc")):
        raise UsageError(f"--warc {args.warc}: not a WARC file name (FILE.warc.gz, FILE.warc)")

    async def pages() -> tuple[list[tuple[str, str | None]], str]:
        entries = []
        async with open_store(args) as store:
            async for page in store.read_pages():
                if (entry := wacz_entry(page)) is not None:
                    entries.append(entry)
            return entries, store.base_url or ""

    entries, base_url = run_async(pages())
    try:
        segments, listed = gather_wacz(
            args.output[0], args.warc, entries, title=f"sitecrawl {base_url}"
        )
    except OSError as exc:
        if machine_failure(exc):
            raise
        path = exc.filename or args.output[0]
        raise UsageError(f"cannot write output: {exc.strerror or exc} ({path})") from None
    if not args.quiet:
        print(
            f"{listed:,} pages, {segments:,} WARC files from {source_name(args)}: {args.output[0]}",
            file=sys.stderr,
        )
    return EXIT_OK
