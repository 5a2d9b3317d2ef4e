"""How much a crawl may do and how long it waits: :class:`Timeouts` and :class:`Limits`,
sections of :class:`~sitecrawl.CrawlConfig`."""

from __future__ import annotations

from dataclasses import dataclass

from ._exceptions import ConfigError
from ._settings import (
    LibraryOnly,
    count,
    flag,
    seconds,
    setting,
    zero_is_none,
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Timeouts:
    """Seconds. ``connect`` covers getting a connection; ``total`` one whole request."""

    connect: float = setting(10.0, LibraryOnly("a tuning knob; --timeout caps it anyway"))
    total: float = setting(
        30.0,
        flag(
            "--timeout",
            parse=seconds,
            metavar="SECONDS",
            help="total time allowed per request (default %(default)s)",
        ),
        group="",
        keyword="timeout",
    )

    def __post_init__(self) -> None:
        if self.connect <= 0 or self.total <= 0:
            raise ConfigError("timeouts must be positive")


@dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    """How far a crawl goes. None means unbounded."""

    max_concurrency: int = setting(
        8,
        flag(
            "-c",
            "--concurrency",
            parse=count(1),
            help="requests in flight at most (default %(default)s)",
            cli_default=16,
            why="the library keeps the course's default (8); the command line allows 16 so"
            " that a crawl of several hosts (subdomains, a domain, external link checks) keeps"
            " two hosts busy at --per-host 8",
        ),
        group="",
        keyword="max_concurrency",
    )
    max_pages: int | None = setting(
        None,
        flag("-n", "--max-pages", parse=count(1), help="stop after N pages"),
        group="",
        keyword="max_pages",
    )
    max_depth: int | None = setting(
        None,
        flag("-d", "--max-depth", parse=count(0), help="follow links N levels deep"),
        group="",
        keyword="max_depth",
    )
    max_redirects: int = setting(10, LibraryOnly("a tuning knob (browsers stop at 20)"))
    max_bytes: int = setting(
        10 * 1024 * 1024,
        flag(
            "--max-bytes",
            parse=count(1),
            metavar="N",
            help="cut bodies at N decoded bytes (default %(default)s: 10 MiB)",
        ),
    )
    #: PDF bodies are read up to this many bytes (a PDF declared or found larger is recorded
    #: ``too_large``, not read); 0: PDFs are not read (nor without the ``pdf`` extra).
    max_pdf_bytes: int = setting(
        50 * 1024 * 1024,
        flag(
            "--max-pdf-bytes",
            parse=count(0),
            metavar="N",
            help="read PDFs of up to N bytes: their text, title and links (default"
            " %(default)s: 50 MiB; 0: PDFs are not read)",
        ),
    )
    max_url_length: int = setting(
        2048,
        flag(
            "--max-url-length",
            parse=count(16),
            metavar="N",
            help="do not follow longer URLs (default %(default)s)",
        ),
    )
    max_query_variants: int = setting(
        100,
        flag(
            "--max-query-variants",
            parse=count(1),
            metavar="N",
            help="follow at most N query strings per path (default %(default)s)",
        ),
    )
    #: Path traps (see :class:`~sitecrawl.control.TrapGuard`): URLs of one pattern (digits
    #: folded: ``/cal/#/#``) past this many, found ever deeper, are not followed; None: off.
    max_pattern_pages: int | None = setting(
        10_000,
        flag(
            "--max-pattern-pages",
            parse=count(0),
            metavar="N",
            to_config=zero_is_none,
            help="path traps: past N URLs of one pattern (digits folded: /cal/#/#) found ever"
            " deeper, and paths repeating a segment 4 times, are not followed (default"
            " %(default)s; 0: no limit)",
        ),
    )

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ConfigError(f"max_concurrency must be at least 1, got {self.max_concurrency}")
        if self.max_pages is not None and self.max_pages < 1:
            raise ConfigError(f"max_pages must be at least 1, got {self.max_pages}")
        if self.max_depth is not None and self.max_depth < 0:
            raise ConfigError(f"max_depth must be 0 or more, got {self.max_depth}")
        if self.max_redirects < 0:
            raise ConfigError("max_redirects must be 0 or more")
        if self.max_bytes < 1:
            raise ConfigError("max_bytes must be positive")
        if self.max_pdf_bytes < 0:
            raise ConfigError("max_pdf_bytes must be 0 or more")
        if self.max_url_length < 16:
            raise ConfigError(f"max_url_length must be at least 16, got {self.max_url_length}")
        if self.max_query_variants < 1:
            raise ConfigError("max_query_variants must be at least 1")
        if self.max_pattern_pages is not None and self.max_pattern_pages < 1:
            raise ConfigError("max_pattern_pages must be at least 1 (None: no limit)")
