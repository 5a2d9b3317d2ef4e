"""``sitecrawl check URL``: crawl a site, then report its broken links; exit 1 when any.

The crawl is the crawl command's own (same options, politeness and robots.txt). Its state
lives in memory unless ``--state PATH`` is given: a link check should see the site as it is
now, not resume an earlier run, and should leave no file behind in CI. After the crawl, the
link targets it did not fetch are checked once each (:class:`~sitecrawl._linkcheck.LinkChecker`):
the site's own images, scripts, stylesheets and iframes always, external URLs with
``--external``.
"""

from __future__ import annotations

import argparse
import socket
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ._common import (
    EXIT_FATAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    add_crawl_options,
    base_url_of,
    config_from_args,
    run_async,
)

if TYPE_CHECKING:
    from .._config import CrawlConfig
    from .._models import Page
    from .._rules import CrawlScope
    from ..frontier import SqliteFrontier


def add_command(commands: Any) -> None:
    check = commands.add_parser(
        "check", help="crawl a site and report broken links (exit 1 when any)"
    )
    check.add_argument("url", metavar="URL", help="the start URL; its host is the site")
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
        "--state", metavar="PATH", help="keep the crawl's state in PATH (default: in memory)"
    )
    check.add_argument(
        "--fresh", action="store_true", help="with --state: start over, forget the file"
    )
    check.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    add_crawl_options(check)
    check.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    if args.fresh and not args.state:
        raise UsageError("--fresh needs --state")
    config = config_from_args(args)
    base_url = base_url_of(args)
    if args.junit:
        try:
            open(args.junit, "ab").close()  # fail now, not after the crawl
        except OSError as exc:
            raise UsageError(f"cannot write {args.junit}: {exc.strerror or exc}") from None
    state = None
    if args.state:
        from .._crawler import stored_options
        from ..frontier import SqliteFrontier

        state = SqliteFrontier(
            args.state, base_url=base_url, fresh=args.fresh, options=stored_options(config)
        )
    return run_async(_check(config, base_url, state, args))


def link_targets(pages: list[Page], scope: CrawlScope, *, external: bool) -> list[str]:
    """What to check after the crawl: targets it did not fetch, distinct, in link order. The
    site's resources (every kind but ``a``); external URLs of any kind with ``external``."""
    from .._audit import page_key

    crawled = {page_key(page.url) for page in pages}
    targets: dict[str, None] = {}
    for page in pages:
        for url, _, _, kind in page.links:
            if url in targets or page_key(url) in crawled:
                continue
            if kind != "a" if scope.contains(url) else external:
                targets[url] = None
    return list(targets)


async def _check(
    config: CrawlConfig, base_url: str, state: SqliteFrontier | None, args: argparse.Namespace
) -> int:
    from .._checkresult import check_outcome, format_text, junit_xml
    from .._linkcheck import LinkChecker
    from .._rules import CrawlScope
    from .._urls import parse_base_url
    from ._crawl import _crawl
    from ._store import CrawlRecords, collector

    started = time.monotonic()
    timestamp = datetime.now(UTC)
    records = CrawlRecords(base_url)
    # The link check reads every page's links (their targets, and what links where).
    config = replace(config, link_details=True)
    code = await _crawl(config, [collector(records)], state, quiet=args.quiet)
    if code == EXIT_INTERRUPTED:
        return code
    # The crawl's scope (its kind and rules' scope), for what is internal.
    scope = CrawlScope([parse_base_url(url) for url in config.starts], config.scope_kind)
    targets = link_targets(records.pages, scope, external=args.external)
    checked_at = time.monotonic()
    async with LinkChecker(config, scope) as checker:
        checked = await checker.check(targets)
    if not args.quiet and targets:
        print(
            f"checked {len(targets):,} more link targets in {time.monotonic() - checked_at:.1f} s",
            file=sys.stderr,
        )
    outcome = check_outcome(
        records.pages, base_url, checked, fail_on_redirect=args.fail_on_redirect
    )
    sys.stdout.write(format_text(outcome))
    if args.junit:
        document = junit_xml(
            outcome,
            timestamp=timestamp,
            hostname=socket.gethostname(),
            seconds=time.monotonic() - started,
        )
        with open(args.junit, "wb") as out:
            out.write(document)
    if code == EXIT_FATAL or outcome.failed:
        return EXIT_FATAL
    return EXIT_OK
