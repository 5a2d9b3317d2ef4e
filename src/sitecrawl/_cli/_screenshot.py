"""``sitecrawl screenshot URL -o FILE.png [--full]``: render one page in headless Chromium and
write its screenshot (the 1280x720 viewport, or with ``--full`` the whole page).

The page is fetched as ``sitecrawl markdown`` fetches it (one crawl of the URL alone:
robots.txt obeyed, the same headers, retries and limits), then rendered; the PNG appears whole
or not at all (written beside ``FILE.png`` and renamed). A page that cannot be rendered is
named on stderr with its error, exit code 1.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from typing import Any

from ._common import EXIT_FATAL, EXIT_OK, UsageError, run_async
from ._markdown import FETCH_OPTIONS, fetch_pages
from ._options import add_setting_options, config_from_args


def add_command(commands: Any) -> None:
    screenshot = commands.add_parser(
        "screenshot", help="render a page in headless Chromium and write its screenshot (PNG)"
    )
    screenshot.add_argument("url", metavar="URL", help="the page")
    screenshot.add_argument("-o", "--output", required=True, metavar="FILE.png", help="the PNG")
    screenshot.add_argument(
        "--full", action="store_true", help="the whole page (default: the 1280x720 viewport)"
    )
    screenshot.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors")
    options = tuple(name for name in FETCH_OPTIONS if name != "render")
    add_setting_options(screenshot, only=options)
    screenshot.set_defaults(handler=_execute)


def _execute(args: argparse.Namespace) -> int:
    from .._exceptions import SitecrawlError
    from .._terminal import printable
    from .._urls import normalize_url, parse_base_url

    try:
        parse_base_url(args.url)
    except SitecrawlError as exc:
        raise UsageError(str(exc)) from None
    if not args.output.endswith(".png"):
        raise UsageError(f"-o {args.output}: the screenshot is a PNG (FILE.png)")
    directory = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(directory):
        raise UsageError(f"-o {args.output}: no directory {directory}")
    args.urls = [args.url]
    args.render = "always"
    config = config_from_args(args)
    work = tempfile.mkdtemp(prefix=".sitecrawl-shot-", dir=directory)
    try:
        render = replace(
            config.render, screenshot="full" if args.full else "viewport", screenshot_dir=work
        )
        pages = run_async(fetch_pages(replace(config, render=render)))
        page = pages.get(normalize_url(config.starts[0]))
        if page is None or page.screenshot is None:
            why = "not fetched" if page is None else page.error or "not an HTML page: not rendered"
            print(f"sitecrawl: error: {printable(args.url)}: {printable(why)}", file=sys.stderr)
            return EXIT_FATAL
        os.replace(page.screenshot, args.output)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not args.quiet:
        print(f"screenshot: {args.output}", file=sys.stderr)
    return EXIT_OK
