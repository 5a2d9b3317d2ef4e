"""``--render`` and its options: rendering pages in headless Chromium (issue 18)."""

from __future__ import annotations

import argparse

from .._config import RENDER_MODES, Render, RenderMode
from ._common import UsageError, count, seconds


def add_render_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("rendering (JavaScript)")
    group.add_argument(
        "--render",
        choices=RENDER_MODES,
        default="never",
        help="render pages in headless Chromium: never (default), auto (pages that look like"
        " an application shell, and URL templates where rendering finds more) or always",
    )
    group.add_argument(
        "--browser",
        metavar="PATH|URL",
        help="the Chromium to drive: an executable, or a ws:// CDP endpoint (default:"
        " chromium on PATH)",
    )
    group.add_argument(
        "--render-tabs",
        type=count(1),
        default=4,
        metavar="N",
        help="pages rendered at once (default 4)",
    )
    group.add_argument(
        "--render-timeout",
        type=seconds,
        default=15.0,
        metavar="SECONDS",
        help="time for a render's load event and network idle together (default 15)",
    )
    group.add_argument(
        "--render-restart",
        type=count(1),
        default=1000,
        metavar="N",
        help="restart the browser every N renders (default 1000)",
    )
    group.add_argument(
        "--render-memory",
        type=count(64),
        default=2048,
        metavar="MB",
        help="restart the browser when its memory passes MB (default 2048)",
    )
    group.add_argument(
        "--render-allow-third-party",
        action="store_true",
        help="let the browser load other hosts' scripts and data (default: blocked)",
    )


def render_from_args(args: argparse.Namespace) -> Render:
    """The :class:`Render` of the options. Rendering asked for without Playwright or a
    browser is a :class:`UsageError` naming what to install, before any crawling."""
    from .._exceptions import ConfigError

    mode: RenderMode = getattr(args, "render", "never")
    if mode == "never":
        return Render()
    try:
        render = Render(
            mode=mode,
            browser=args.browser,
            tabs=args.render_tabs,
            timeout=args.render_timeout,
            restart_every=args.render_restart,
            max_memory_mb=args.render_memory,
            allow_third_party=args.render_allow_third_party,
        )
        from ..render._browser import find_browser

        find_browser(render)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return render
