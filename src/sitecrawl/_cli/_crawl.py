"""``sitecrawl crawl URL [URL ...]`` (or ``--list SOURCE``): crawl a site, stream its pages to
outputs, keep state to resume."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from . import _signals
from ._archive import add_archive_options, archive_options, check_archives, check_assets
from ._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_state_options,
    base_url_of,
    ctrl_c_stops,
    progress,
    run_async,
    start_page_failed,
    verbose,
)
from ._list import add_start_options, is_url, take_sitemap, take_starts
from ._options import add_crawl_options, config_from_args
from ._outputs import (
    add_csv_markdown,
    check_outputs,
    check_writable,
    markdown_for_outputs,
    open_sinks,
)
from ._redis import add_redis_options, seed_and_work
from ._report import read_report_data, write_report, write_report_data
from ._store import CrawlRecords

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._models import CrawlStats
    from ..frontier import SqliteFrontier
    from ..sinks import Sink


#: Crawls a state file keeps by default: the current one, the previous one (revalidation,
#: ``--diff``) and one more, so that the file stops growing after a few re-crawls.
DEFAULT_KEEP = 3


def _keep(text: str) -> int:
    """``--keep N`` (at least 1), or ``all`` (0: every crawl)."""
    if text == "all":
        return 0
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of crawls or 'all', not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1 crawl, not {value}")
    return value


def add_command(commands: Any) -> None:
    crawl = commands.add_parser("crawl", help="crawl a site and write its pages")
    add_start_options(crawl)
    crawl.add_argument(
        "-o",
        "--output",
        action="append",
        default=[],
        metavar="FILE",
        help="write pages to FILE (.csv, .jsonl, .json, .parquet; - for JSONL on stdout), to"
        " DIR/ (one Markdown file a page), llms.txt or llms-full.txt (DIR/ and llms-full.txt"
        " turn --markdown on), or to a web archive of every request and response (.warc.gz,"
        " .warc, .wacz); repeatable",
    )
    add_csv_markdown(crawl)
    add_archive_options(crawl)
    add_state_options(
        crawl,
        state="keep the crawl's state in PATH (default ./<host>.sitecrawl.db from a site's root,"
        " else ./<host>-<path>-<digest>.sitecrawl.db named by the scope; for --list,"
        " ./<host>-list-<digest>.sitecrawl.db); rerun to resume",
        fresh="start over: forget what the state file holds",
        no_state=True,
    )
    crawl.add_argument(
        "--keep",
        type=_keep,
        metavar="N",
        help=f"keep the last N crawls in the state file (default {DEFAULT_KEEP}; 'all': every"
        " crawl); a run after a finished crawl starts the next one",
    )
    crawl.add_argument(
        "--diff",
        action="store_true",
        help="at the end, print what changed since the previous crawl of the state file",
    )
    crawl.add_argument(
        "--report", metavar="FILE", help="at the end, write the crawl's HTML report to FILE"
    )
    crawl.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    crawl.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="log each request on stderr (status, time, size, URL, error)",
    )
    add_crawl_options(crawl)
    add_redis_options(crawl, required=False, lease=True, worker=True)
    crawl.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    if args.no_state and (args.state or args.fresh or args.keep is not None or args.diff):
        raise UsageError("--no-state cannot be combined with --state, --fresh, --keep or --diff")
    source = take_starts(args)
    config = config_from_args(args)
    if source is not None:
        from ._list import list_state_path

        if is_url(source):
            take_sitemap(args, config, source)
            config = config_from_args(args)
    base_url = base_url_of(args)
    if source is not None:
        if args.redis is not None and args.crawl_id is None:
            args.crawl_id = list_state_path(source, args.urls).removesuffix(".sitecrawl.db")
        if args.state is None and not args.no_state:
            args.state = list_state_path(source, args.urls)
    check_outputs(args.output, crawl=True, archives=True)
    check_archives(args.output, redis=args.redis is not None)
    if args.redis is None:  # (in Redis, the workers' -o archive)
        check_assets(config.archive_assets, args.output)
    config = markdown_for_outputs(config, args.output)
    config = _screenshots_beside(config, args)
    for path in args.output:  # now: a refused output leaves no state file behind
        if path != "-":
            check_writable(path, output=True)
    if args.report:
        check_writable(args.report)
    if args.redis is not None:
        with verbose(args):
            return seed_and_work(args, config, args.output)
    if args.crawl_id is not None:
        raise UsageError("--crawl-id names a crawl in Redis: add --redis URL")
    with _signals.deferred():  # set-up and putting outputs in place: not stopped half-way
        state = None
        created = False  # this run made the state file
        if not args.no_state:
            from ..frontier import SqliteFrontier

            path = args.state or default_state_path(config)
            created = not os.path.exists(path)
            state = SqliteFrontier(
                path,
                base_url=base_url,
                fresh=args.fresh,
                keep=(args.keep or None) if args.keep is not None else DEFAULT_KEEP,
                max_pages=config.limits.max_pages,
            )
        if args.report:  # the report reads every page's links
            config = replace(config, link_details=True)
        records = CrawlRecords(config.base_url) if args.report and state is None else None
        finished: list[CrawlStats] = []
        with verbose(args):
            code = run_async(_crawl_to_outputs(config, state, args, records, finished))
        if state is not None and created and code != EXIT_INTERRUPTED and _nothing(finished):
            _remove_state(state.path)  # a crawl that reached nothing: nothing to resume
            return code
    if args.report:
        if records is None:
            assert state is not None
            with _signals.deferred():
                data, changes = run_async(read_report_data(state.path))
            # Ctrl-C: not written
            write_report_data(data, args.report, shlex.quote(state.path), changes)
        else:
            if finished:
                records.seconds = finished[0].elapsed
            write_report(records, args.report)
        if not args.quiet:
            print(f"report: {args.report}", file=sys.stderr)
    if args.diff and state is not None and state.previous is not None:
        from ._diff import print_changes

        print_changes(state.path, state.previous["id"], state.crawl)
    return code


async def _crawl_to_outputs(
    config: CrawlConfig,
    state: SqliteFrontier | None,
    args: argparse.Namespace,
    records: CrawlRecords | None,
    finished: list[CrawlStats],
) -> int:
    """Validate and lock the state file first: a run it refuses touches no output. Then
    crawl into the outputs, put in place when the crawl ends, stopped or not. ``records``
    collects the pages (links included) of an in-memory crawl for its report."""
    from ._store import collector

    if state is not None:
        await state.open()  # StateError: another site, corrupt, newer schema, locked
    try:
        from ..parse import stored_rules

        extract = config.extract or stored_rules(state.config if state is not None else None)
        with open_sinks(
            args.output,
            extract=extract,
            csv_markdown=args.csv_markdown,
            base_url=config.base_url,
            archive=archive_options(args, config),
        ) as sinks:
            extra = [collector(records)] if records is not None else []
            return await _crawl(
                config,
                [*sinks, *extra],
                state,
                quiet=args.quiet,
                finished=finished,
                verbose=args.verbose,
                outputs=args.output,
            )
    finally:
        if state is not None:
            await state.close()


def _screenshots_beside(config: CrawlConfig, args: argparse.Namespace) -> CrawlConfig:
    """``--screenshot`` without ``--screenshot-dir``: the PNGs go beside the state file, else
    the first output: ``NAME.screenshots/``."""
    if not config.render.screenshot or isinstance(getattr(args, "screenshot_dir", None), str):
        return config
    beside = args.state or next((path for path in args.output if path != "-"), None)
    if beside is None and not args.no_state and args.redis is None:
        beside = default_state_path(config)
    if beside is None:
        return config
    directory = os.path.splitext(os.path.basename(beside))[0] + ".screenshots"
    directory = os.path.join(os.path.dirname(beside), directory)
    return replace(config, render=replace(config.render, screenshot_dir=directory))


def _nothing(finished: list[CrawlStats]) -> bool:
    """Whether the crawl ran and no page of it got a response (no host answered)."""
    return bool(finished) and all(status is None for status in finished[0].statuses)


def _remove_state(path: str) -> None:
    for suffix in ("-wal", "-shm", ""):  # the WAL first: never a WAL without its file
        with contextlib.suppress(FileNotFoundError):
            os.remove(path + suffix)


def default_state_path(config: CrawlConfig) -> str:
    """``<host>.sitecrawl.db`` in the current directory for a crawl of a site from its root
    in the default scope (``:`` of a port becomes ``_``); any other crawl is named by its
    scope too: ``<host>-<path>[-<scope>]-<digest>.sitecrawl.db``, with 8 hex digits of the
    SHA-256 of its scope and start URLs, so that crawling ``/library/`` after ``/`` gets a
    file of its own, and the same command resumes the same file."""
    import hashlib
    import re

    from .._urls import split_host
    from ..control import default_scope, url_path

    starts = config.starts
    host = split_host(starts[0]).replace(":", "_")
    first, kind = starts[0], config.scope_kind
    root = len(starts) == 1 and first.endswith("/") and url_path(first) == "/"
    if root and kind == default_scope(first):
        return f"{host}.sitecrawl.db"
    parts = [host]
    if path := re.sub(r"[^A-Za-z0-9._]+", "-", url_path(first)).strip("-.")[:40].strip("-."):
        parts.append(path)
    if kind != default_scope(first):
        parts.append(kind)
    digest = hashlib.sha256("\n".join([kind, *starts]).encode()).hexdigest()[:8]
    return "-".join([*parts, digest]) + ".sitecrawl.db"


async def _crawl(
    config: CrawlConfig,
    sinks: list[Sink],
    state: SqliteFrontier | None,
    *,
    quiet: bool,
    finished: list[CrawlStats] | None = None,
    stop_at: float | None = None,
    verbose: bool = False,
    outputs: list[str] | None = None,
) -> int:
    """Run the crawl (:meth:`AsyncCrawler.run`) under Ctrl-C and SIGTERM, with progress;
    ``finished`` receives the crawl's stats. At ``stop_at`` (``time.monotonic()``) it stops
    as at Ctrl-C, and the summary says so. The summary names the first failed pages and where
    the others are (the state file, else ``outputs``)."""
    from .._crawler import AsyncCrawler
    from .._progress import summary
    from ..sinks import archived_hook, recorder_of

    crawler = AsyncCrawler(
        config.base_url,
        config=config,
        frontier=state,
        keep_pages=False,
        # a page a state file marks done is in the archives first
        on_page=archived_hook(sinks, durable=state is not None),
        recorder=recorder_of(sinks),  # with web archives: every request and response
    )
    interrupted = True
    start_failure = None
    kept = 0
    try:
        async with ctrl_c_stops(crawler, quiet=quiet), crawler:
            if state is not None and not quiet:
                print(await _state_line(state), file=sys.stderr)
            run = await crawler.run(
                sinks, stop_at=stop_at, watch=None if quiet else progress(crawler, verbose)
            )
            interrupted, start_failure = run.interrupted, run.start_failure
            if state is not None:
                kept = len(state.crawls())
    except asyncio.CancelledError:  # a second stop signal before the crawl began
        task = asyncio.current_task()
        if not crawler.interrupted or task is None:
            raise
        task.uncancel()
    if finished is not None:
        finished.append(crawler.stats)
    if not quiet:
        print(summary(crawler.stats, _where_failures_are(state, outputs)), file=sys.stderr)
        if state is not None and kept:
            print(_state_size(state, kept), file=sys.stderr)
    if interrupted:
        if state is not None and not quiet:
            print(
                f"interrupted: run the same command again to resume ({state.path})", file=sys.stderr
            )
        return EXIT_INTERRUPTED
    if start_failure is not None:
        return start_page_failed(start_failure)
    return EXIT_OK


async def _state_line(state: SqliteFrontier) -> str:
    """Where the state lives; on a resume, how far the crawl went."""
    stats = await state.stats()
    line = f"state: {state.path}"
    if stats.done:
        line += (
            f" (resuming crawl {state.crawl}: {stats.done:,} pages done, {stats.queued:,}"
            f" queued, {state.reclaimed:,} in flight when the last run stopped)"
        )
    elif state.previous is not None:
        line += f" (crawl {state.crawl} of this site; {_ended(state.previous)})"
    return line


def _state_size(state: SqliteFrontier, kept: int) -> str:
    """``state: site.db, 12.3 MB, 3 crawls kept``: how big the file is (with its WAL)."""
    import os

    from .._progress import size_text

    size = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            size += os.path.getsize(state.path + suffix)
    return f"state: {state.path}, {size_text(size)}, {kept} crawl{'s' * (kept != 1)} kept"


def _where_failures_are(state: SqliteFrontier | None, outputs: list[str] | None) -> str | None:
    """Where a crawl's failed pages are all listed, for its summary."""
    if state is not None:
        return f"sitecrawl export {shlex.quote(state.path)} -o pages.csv (error, error_kind)"
    files = [name for name in outputs or () if name != "-"]
    return f"the error and error_kind of {', '.join(files)}" if files else None


def _ended(crawl: dict[str, Any]) -> str:
    """``crawl 3 finished 2026-12-01 10:02`` (UTC), or ``crawl 3 was not finished``."""
    when = crawl.get("finished")
    if not when:
        return f"crawl {crawl['id']} was not finished"
    return f"crawl {crawl['id']} finished {str(when)[:16].replace('T', ' ')} UTC"
