"""Typed, frozen configuration. Built by the CLI or by library callers, passed explicitly."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._exceptions import ConfigError
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


@dataclass(frozen=True, kw_only=True, slots=True)
class CrawlConfig:
    """Everything a crawl needs to know, except where its state and output go."""

    base_url: str
    limits: Limits = field(default_factory=Limits)
    timeouts: Timeouts = field(default_factory=Timeouts)
    user_agent: str = DEFAULT_USER_AGENT
    subdomains: bool = False
    #: Processes used: 1 parses on the event loop; N > 1 adds N - 1 parser processes.
    processes: int = 1

    def __post_init__(self) -> None:
        if self.processes < 1:
            raise ConfigError(f"processes must be at least 1, got {self.processes}")
