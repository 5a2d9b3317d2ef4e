"""``sitecrawl check URL``: crawl a site, then report its broken links; exit 1 when any.

The crawl is the crawl command's own (same options, politeness and robots.txt). Its state
lives in memory unless ``--state PATH`` is given: a link check should see the site as it is
now, not resume an earlier run, and should leave no file behind in CI. After the crawl, the
link targets it did not fetch are checked once each
(:class:`~sitecrawl.audit._linkcheck.LinkChecker`):
the site's own images, scripts, stylesheets and iframes always, external URLs with
``--external``, with progress on stderr.

Made for CI: ``--max-time`` bounds the whole run (the crawl stops taking new pages, the link
checks are cut off); Ctrl-C or SIGTERM stops it too. Either way the results so far are
printed and written (``--junit`` whole, through a temporary file), the summary says how many
targets were not checked and why, and the exit code says it was cut short: 1 for the time
limit, 130 for Ctrl-C, 143 for SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shlex
import signal
import socket
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .._settings import seconds
from ._archive import check_assets
from ._common import (
    EXIT_FATAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_state_options,
    base_url_of,
    run_async,
)
from ._list import add_start_options, is_url, take_sitemap, take_starts
from ._options import add_crawl_options, config_from_args

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._models import Page
    from ..audit import IssueRow, TargetStatus
    from ..control import CrawlScope
    from ..frontier import SqliteFrontier


def add_command(commands: Any) -> None:
    from ..audit import SEVERITIES

    check = commands.add_parser(
        "check", help="crawl a site and report broken links (exit 1 when any)"
    )
    add_start_options(check)
    check.add_argument(
        "--external", action="store_true", help="also check each external URL once (HEAD/GET)"
    )
    check.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    check.add_argument(
        "--fail-on-redirect",
        action="store_true",
        help="redirected links are failures, not warnings",
    )
    check.add_argument(
        "--fail-on",
        action="append",
        type=_check_names,
        metavar="CHECK[,CHECK]",
        help="also fail on these issues (a check of docs/checks.md, or a family: hreflang);"
        " repeatable",
    )
    check.add_argument(
        "--fail-on-severity",
        choices=SEVERITIES,
        help="also fail on every issue of this severity or worse",
    )
    add_state_options(
        check,
        state="keep the crawl's state in PATH (default: in memory)",
        fresh="with --state: start over, forget the file",
    )
    check.add_argument(
        "--max-time",
        type=seconds,
        metavar="SECONDS",
        help="stop after SECONDS in all (crawl and checks), report what was found, exit 1"
        " (a crawl request in flight may take up to --timeout more)",
    )
    check.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    add_crawl_options(check)
    check.set_defaults(handler=_execute)


def _check_names(text: str) -> tuple[str, ...]:
    from ..audit import check_names

    try:
        return check_names(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _failing_issues(
    pages: list[Page], base_url: str, checked: dict[str, TargetStatus], args: argparse.Namespace
) -> tuple[IssueRow, ...]:
    """The issues (docs/checks.md) that ``--fail-on`` and ``--fail-on-severity`` fail on:
    the audit of the crawl once it has ended, the link checks' answers included."""
    if not args.fail_on and not args.fail_on_severity:
        return ()
    from ..audit import DEFAULT_NEAR_DUP_THRESHOLD, crawl_issues, failing, site_rows

    def target(url: str) -> tuple[int | None, str | None, str | None] | None:
        found = checked.get(url)
        return None if found is None else (found.status, found.error, found.error_kind)

    rows = site_rows(pages, base_url, target_status=target)
    issues = crawl_issues(
        rows.pages,
        rows.links,
        rows.images,
        start_url=base_url,
        near_dup_threshold=getattr(args, "near_dup_threshold", None) or DEFAULT_NEAR_DUP_THRESHOLD,
    )
    names = [name for names in args.fail_on or () for name in names]
    found = failing(issues, checks=names, severity=args.fail_on_severity)
    # Broken links fail the check anyway, each listed once as BROKEN with its referrers.
    return tuple(issue for issue in found if issue.check != "link.broken")


def _execute(args: argparse.Namespace) -> int:
    if args.fresh and not args.state:
        raise UsageError("--fresh needs --state")
    source = take_starts(args)
    config = config_from_args(args)
    check_assets(config.archive_assets, [], "check")
    if source is not None and is_url(source):
        take_sitemap(args, config, source)
        config = config_from_args(args)
    base_url = base_url_of(args)
    if args.junit:
        from ..sinks import Replacement

        trial = Replacement(args.junit)  # fail now, not after the crawl; leave nothing behind
        try:
            open(trial.temp, "wb").close()
        except OSError as exc:
            raise UsageError(f"cannot write {args.junit}: {exc.strerror or exc}") from None
        trial.discard()
    state = None
    if args.state:
        from ..frontier import SqliteFrontier

        state = SqliteFrontier(args.state, base_url=base_url, fresh=args.fresh)
    return run_async(_check(config, base_url, state, args))


def link_targets(
    pages: list[Page], scope: CrawlScope, *, external: bool, followed: bool = True
) -> list[str]:
    """What to check after the crawl (:func:`sitecrawl.audit.link_targets`, imported when
    used: ``sitecrawl --help`` loads no audit)."""
    from ..audit import link_targets as targets

    return targets(pages, scope, external=external, followed=followed)


async def _check(
    config: CrawlConfig, base_url: str, state: SqliteFrontier | None, args: argparse.Namespace
) -> int:
    from ..audit import TIME_LIMIT, check_outcome, format_text, junit_xml
    from ..control import CrawlScope
    from ..sinks import open_replacing
    from ._crawl import _crawl
    from ._store import CrawlRecords, collector

    started = time.monotonic()
    deadline = None if args.max_time is None else started + args.max_time
    timestamp = datetime.now(UTC)
    records = CrawlRecords(base_url)
    # The link check reads every page's links (their targets, and what links where).
    config = replace(config, link_details=True)
    code = await _crawl(config, [collector(records)], state, quiet=args.quiet, stop_at=deadline)
    # The start page failed and the crawl said why: no summary of nothing (JUnit still says so).
    start_failed = code == EXIT_FATAL
    crawl_cut = None
    if code == EXIT_INTERRUPTED:
        crawl_cut = TIME_LIMIT if _past(deadline) else _signalled()
    # The crawl's scope (its kind and rules' scope), for what is internal.
    scope = CrawlScope(list(config.starts), config.scope_kind)
    followed = config.limits.max_depth != 0
    targets = link_targets(records.pages, scope, external=args.external, followed=followed)
    with _stop_signals_set() as ctrl_c:
        checked: dict[str, TargetStatus] = {}
        cut = crawl_cut
        if targets and cut is None:
            checked, cut = await _check_targets(config, scope, targets, deadline, ctrl_c, args)
        skipped = {} if cut is None else {url: cut for url in targets if url not in checked}
        quiet = args.quiet or start_failed
        with ResultsProgress(len(records.pages), quiet=quiet) as progress:
            outcome = check_outcome(
                records.pages,
                base_url,
                checked,
                fail_on_redirect=args.fail_on_redirect,
                skipped=skipped,
                crawl_cut=crawl_cut,
                progress=progress,
            )
        outcome = replace(outcome, issues=_failing_issues(records.pages, base_url, checked, args))
        if not start_failed:
            sys.stdout.write(format_text(outcome, export=_export_hint(args)))
        if args.junit:
            document = junit_xml(
                outcome,
                timestamp=timestamp,
                hostname=socket.gethostname(),
                seconds=time.monotonic() - started,
            )
            with open_replacing(args.junit, "wb") as out:
                out.write(document)
    if cut is not None and cut != TIME_LIMIT:
        return EXIT_INTERRUPTED  # 130 for Ctrl-C, 143 for SIGTERM (the CLI's main)
    if cut == TIME_LIMIT and not args.quiet:
        print(f"sitecrawl: time limit reached (--max-time {args.max_time:g})", file=sys.stderr)
    if code == EXIT_FATAL or outcome.failed or cut == TIME_LIMIT:
        return EXIT_FATAL
    return EXIT_OK


def _export_hint(args: argparse.Namespace) -> str:
    """Where every link is listed, for "and N more"."""
    if args.state:
        return f"sitecrawl export {shlex.quote(args.state)} -t links -o links.csv"
    return "check with --state FILE, then sitecrawl export FILE -t links -o links.csv"


class ResultsProgress:
    """Progress while the results are put together (on stderr, like the checks'): a line
    when it starts, then one every :data:`EVERY` seconds, and one when it ends. Nothing
    with ``quiet``."""

    EVERY = 2.0

    def __init__(self, pages: int, *, quiet: bool) -> None:
        self._pages = pages
        self._quiet = quiet
        self._started = self._last = 0.0

    def __enter__(self) -> ResultsProgress:
        self._started = self._last = time.monotonic()
        pages = f"{self._pages:,} page{'s' * (self._pages != 1)}"
        self._print(f"grouping the links of {pages} by target")
        return self

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self._last >= self.EVERY and done < total:
            self._last = now
            self._print(f"grouped the links of {done:,} of {total:,} pages")

    def __exit__(self, *exc: object) -> None:
        self._print(f"grouped in {time.monotonic() - self._started:.1f} s")

    def _print(self, line: str) -> None:
        if not self._quiet:
            print(line, file=sys.stderr, flush=True)


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _signalled() -> str:
    """Why the run was cut by a signal, as the summary says it: ``cut by Ctrl-C`` (SIGTERM)."""
    from ..audit import INTERRUPTED
    from . import _signals

    received = _signals.received()
    if not received or received[0] == signal.SIGINT:
        return INTERRUPTED
    return f"cut by {_signals.name(received[0])}"


@contextlib.contextmanager
def _stop_signals_set() -> Iterator[asyncio.Event]:
    """While inside, a stop signal (Ctrl-C, SIGTERM) sets the event, counts for the exit code,
    and does nothing else (no traceback while the results are written). One that arrived
    while the crawl was closing sets it at once."""
    from . import _signals

    event = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        _signals.record(signum)
        event.set()

    for signum in _signals.STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        if _signals.take_pending():
            event.set()
        yield event
    finally:
        for signum in _signals.STOP_SIGNALS:
            loop.remove_signal_handler(signum)
        _signals.install()


async def _check_targets(
    config: CrawlConfig,
    scope: CrawlScope,
    targets: list[str],
    deadline: float | None,
    ctrl_c: asyncio.Event,
    args: argparse.Namespace,
) -> tuple[dict[str, TargetStatus], str | None]:
    """Check the targets (:meth:`LinkChecker.check_until`) with progress until done, the
    deadline, or Ctrl-C; return what was found and why it stopped early (None: it did not)."""
    from .._progress import CheckProgress
    from ..audit import TIME_LIMIT, LinkChecker

    async with (
        LinkChecker(config, scope) as checker,
        CheckProgress(checker, targets, quiet=args.quiet),
    ):
        cut = await checker.check_until(targets, deadline=deadline, stop=ctrl_c)
        if cut is None:
            return checker.results, None
        if cut == "deadline":
            return dict(checker.results), TIME_LIMIT
        why = _signalled()
        if not args.quiet:
            print(
                f"\n{why.removeprefix('cut by ')}: stopped, the results so far follow",
                file=sys.stderr,
            )
        return dict(checker.results), why
