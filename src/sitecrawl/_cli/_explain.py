"""``sitecrawl explain START_URL [crawl options] URL...``: would the crawl fetch each URL?

For each URL: whether a crawl from START_URL with these options would follow it, the scope or
rule that decided, and the URL after ``--strip-params`` / ``--rewrite``. Nothing is fetched:
robots.txt, redirects and limits (depth, pages, traps) are not consulted.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import EXIT_OK, UsageError
from ._options import add_crawl_options, rules_from_args


def add_command(commands: Any) -> None:
    explain = commands.add_parser(
        "explain",
        help="say whether a crawl would follow each URL, and why (nothing is fetched)",
    )
    explain.add_argument("start", metavar="START_URL", help="the crawl's start URL")
    explain.add_argument(
        "urls", nargs="+", metavar="URL", help="URLs to explain (relative ones: to START_URL)"
    )
    add_crawl_options(explain)  # any crawl command's options are accepted
    explain.set_defaults(handler=_execute)


def explain_lines(start: str, urls: list[str], args: argparse.Namespace) -> list[str]:
    """One line per URL: ``follow``/``skip``, the URL as the crawl would queue it, why."""
    from .._config import CrawlConfig
    from .._exceptions import ConfigError
    from .._urls import join, parse_base_url
    from ..control import CrawlScope, LinkRules

    rules = rules_from_args(args)
    try:
        config = CrawlConfig(base_url=start, rules=rules)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    scope = CrawlScope([start], config.scope_kind)
    link_rules = LinkRules(scope, rules)
    lines = [f"scope: {scope.describe()}"]
    for raw in urls:
        url = join(start, raw)
        if url is None:
            lines.append(f"skip    {raw}  (not an http(s) URL)")
            continue
        if url == parse_base_url(start):
            lines.append(f"follow  {url}  (the start URL: always fetched)")
            continue
        verdict = link_rules.verdict(url)
        shown = verdict.url or url
        why = verdict.reason
        if verdict.url is not None and verdict.url != url:
            why += f"; rewritten from {url}"
        lines.append(f"{'follow' if verdict.follow else 'skip':<6}  {shown}  ({why})")
    return lines


def _execute(args: argparse.Namespace) -> int:
    from ._common import base_url_of

    args.url = args.start
    start = base_url_of(args)
    sys.stdout.write("\n".join(explain_lines(start, args.urls, args)) + "\n")
    return EXIT_OK
