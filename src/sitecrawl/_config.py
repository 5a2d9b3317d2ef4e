"""Typed, frozen configuration. Built by the CLI or by library callers, passed explicitly."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._exceptions import ConfigError
from ._rules import Rules, ScopeKind, default_scope
from ._version import __version__

DEFAULT_USER_AGENT = f"sitecrawl/{__version__}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Timeouts:
    """Seconds. ``connect`` covers getting a connection; ``total`` one whole request."""

    connect: float = 10.0
    total: float = 30.0

    def __post_init__(self) -> None:
        if self.connect <= 0 or self.total <= 0:
            raise ConfigError("timeouts must be positive")


@dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    """How far a crawl goes. None means unbounded."""

    max_concurrency: int = 8
    max_pages: int | None = None
    max_depth: int | None = None
    max_redirects: int = 10
    max_bytes: int = 10 * 1024 * 1024
    max_url_length: int = 2048
    max_query_variants: int = 100
    #: Path traps (see :class:`~sitecrawl._urls.TrapGuard`): URLs of one pattern (digits
    #: folded: ``/cal/#/#``) past this many, found ever deeper, are not followed; None: off.
    max_pattern_pages: int | None = 10_000

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
        if self.max_url_length < 16:
            raise ConfigError(f"max_url_length must be at least 16, got {self.max_url_length}")
        if self.max_query_variants < 1:
            raise ConfigError("max_query_variants must be at least 1")
        if self.max_pattern_pages is not None and self.max_pattern_pages < 1:
            raise ConfigError("max_pattern_pages must be at least 1 (None: no limit)")


@dataclass(frozen=True, kw_only=True, slots=True)
class Politeness:
    """How gently a crawl treats each host. Times are seconds.

    ``per_host`` caps requests in flight per host (never above ``Limits.max_concurrency``);
    ``delay`` is the minimum interval between request starts on one host, lengthened by up to
    ``jitter`` (a fraction: 0.5 adds 0-50 %) and by the robots.txt ``Crawl-delay`` when that
    is larger (capped at ``max_crawl_delay``). ``retries`` more attempts are made on timeouts,
    connection errors and 408/429/500/502/503/504, ``backoff`` * 2**n apart (with jitter);
    a ``Retry-After`` is honoured up to ``max_backoff``.
    """

    obey_robots: bool = True
    max_crawl_delay: float = 30.0
    sitemaps: bool = True
    follow_nofollow: bool = False
    per_host: int = 8
    delay: float = 0.0
    jitter: float = 0.0
    retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 60.0
    adaptive: bool = True

    def __post_init__(self) -> None:
        if self.per_host < 1:
            raise ConfigError(f"per_host must be at least 1, got {self.per_host}")
        if self.delay < 0 or self.max_crawl_delay < 0:
            raise ConfigError("delays must be 0 or more")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"jitter must be a fraction between 0 and 1, got {self.jitter}")
        if self.retries < 0:
            raise ConfigError(f"retries must be 0 or more, got {self.retries}")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ConfigError("backoff times must be 0 or more")


@dataclass(frozen=True, kw_only=True, slots=True)
class CrawlConfig:
    """Everything a crawl needs to know, except where its state and output go.

    ``start_urls``: every start URL when there are several (``base_url`` is the first); the
    crawl's scope is the union of theirs. ``rules`` aims the crawl (:class:`Rules`: scope
    kind, include/exclude, strip-params, rewrites); ``subdomains=True`` is
    ``Rules(scope="subdomains")``."""

    base_url: str
    start_urls: tuple[str, ...] = ()
    rules: Rules = field(default_factory=Rules)
    limits: Limits = field(default_factory=Limits)
    timeouts: Timeouts = field(default_factory=Timeouts)
    politeness: Politeness = field(default_factory=Politeness)
    user_agent: str = DEFAULT_USER_AGENT
    subdomains: bool = False
    #: Processes used: 1 parses on the event loop; N > 1 adds N - 1 parser processes.
    processes: int = 1
    #: Fill each page's ``links`` (every link's text, rel and kind). None: only when the
    #: frontier stores pages (a state file), where reports and audits read them.
    link_details: bool | None = None

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise ConfigError(f"processes must be at least 1, got {self.processes}")
        if self.subdomains and self.rules.scope not in (None, "subdomains"):
            raise ConfigError(f"subdomains=True contradicts scope {self.rules.scope!r}")

    @property
    def starts(self) -> tuple[str, ...]:
        """The start URLs: ``start_urls``, else ``base_url`` alone."""
        return self.start_urls or (self.base_url,)

    @property
    def scope_kind(self) -> ScopeKind:
        """The scope that runs: the rules', else ``subdomains``, else :func:`default_scope`
        of the first start URL."""
        if self.rules.scope is not None:
            return self.rules.scope
        if self.subdomains:
            return "subdomains"
        from ._urls import parse_base_url

        return default_scope(parse_base_url(self.base_url))
