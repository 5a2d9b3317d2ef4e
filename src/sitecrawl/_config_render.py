"""Rendering pages in headless Chromium: :class:`Render`, a section of
:class:`~sitecrawl.CrawlConfig` (what :mod:`sitecrawl.render` reads)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ._exceptions import ConfigError
from ._settings import (
    LibraryOnly,
    count,
    flag,
    seconds,
    setting,
)

if TYPE_CHECKING:
    pass

RenderMode = Literal["never", "auto", "always"]
RENDER_MODES: tuple[RenderMode, ...] = ("never", "auto", "always")
Screenshot = Literal["viewport", "full"]
SCREENSHOTS: tuple[Screenshot, ...] = ("viewport", "full")


@dataclass(frozen=True, kw_only=True, slots=True)
class Render:
    """Rendering pages in headless Chromium (:mod:`sitecrawl.render`). ``mode``: ``never``,
    ``auto`` (pages that look like an application shell, and templates where rendering was
    seen to find more) or ``always`` (every HTML page). ``browser``: a Chromium executable,
    or a ``ws://`` / ``http://`` CDP endpoint of a running browser (None: ``chromium`` on
    PATH). ``tabs`` pages render at once; ``timeout`` seconds cover a render's navigation
    (the load event) and its network idle (no request in flight for ``idle`` seconds)
    together. The browser is restarted every ``restart_every`` renders and when its memory
    passes ``max_memory_mb``. Third-party requests are aborted unless ``allow_third_party``.
    ``screenshot``: a PNG of each rendered page (``viewport`` or ``full`` page) in
    ``screenshot_dir``, and a small JPEG thumbnail beside it (the record's ``screenshot``);
    ``a11y``: axe-core's violations of each rendered page (the record's ``a11y``)."""

    mode: RenderMode = setting(
        "never",
        flag(
            "--render",
            choices=RENDER_MODES,
            help="render pages in headless Chromium: never (default), auto (pages that look"
            " like an application shell, and URL templates where rendering finds more) or"
            " always",
        ),
    )
    browser: str | None = setting(
        None,
        flag(
            "--browser",
            metavar="PATH|URL",
            help="the Chromium to drive: an executable, or a ws:// CDP endpoint (default:"
            " chromium on PATH)",
        ),
    )
    tabs: int = setting(
        4,
        flag(
            "--render-tabs",
            parse=count(1),
            metavar="N",
            help="pages rendered at once (default %(default)s)",
        ),
    )
    timeout: float = setting(
        15.0,
        flag(
            "--render-timeout",
            parse=seconds,
            metavar="SECONDS",
            help="time for a render's load event and network idle together (default %(default)s)",
        ),
    )
    idle: float = setting(0.3, LibraryOnly("a tuning knob of the network-idle wait"))
    restart_every: int = setting(
        1000,
        flag(
            "--render-restart",
            parse=count(1),
            metavar="N",
            help="restart the browser every N renders (default %(default)s)",
        ),
    )
    max_memory_mb: int = setting(
        2048,
        flag(
            "--render-memory",
            parse=count(64),
            metavar="MB",
            help="restart the browser when its memory passes MB (default %(default)s)",
        ),
    )
    allow_third_party: bool = setting(
        False,
        flag(
            "--render-allow-third-party",
            kind="true",
            help="let the browser load other hosts' scripts and data (default: blocked)",
        ),
    )

    screenshot: Screenshot | None = setting(
        None,
        flag(
            "--screenshot",
            kind="optional",
            const="viewport",
            choices=SCREENSHOTS,
            help="with --render: a PNG of each rendered page, the viewport (1280x720) or with"
            " 'full' the whole page, in --screenshot-dir",
        ),
    )
    screenshot_dir: str = setting(
        "screenshots",
        flag(
            "--screenshot-dir",
            metavar="DIR",
            help="where --screenshot writes its PNGs (default: beside the state file or the"
            " first output, NAME.screenshots/)",
        ),
    )
    a11y: bool = setting(
        False,
        flag(
            "--a11y",
            kind="true",
            help="with --render: run axe-core in each rendered page (its violations: the a11y"
            " field, a11y.RULE rows of the issues table)",
        ),
    )

    def __post_init__(self) -> None:
        if (self.screenshot or self.a11y) and self.mode == "never":
            raise ConfigError("--screenshot and --a11y look at rendered pages: add --render")
        if self.screenshot not in (None, *SCREENSHOTS):
            raise ConfigError(f"screenshot is viewport or full, not {self.screenshot!r}")
        if self.mode not in RENDER_MODES:
            raise ConfigError(f"render mode is never, auto or always, not {self.mode!r}")
        if self.tabs < 1:
            raise ConfigError(f"render tabs must be at least 1, got {self.tabs}")
        if self.timeout <= 0 or self.idle < 0:
            raise ConfigError("render timeout must be positive, idle 0 or more")
        if self.restart_every < 1 or self.max_memory_mb < 1:
            raise ConfigError("render restart_every and max_memory_mb must be positive")
