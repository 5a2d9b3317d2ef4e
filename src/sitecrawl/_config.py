"""Typed, frozen configuration. Built by the CLI or by library callers, passed explicitly."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ._config_limits import Limits, Timeouts
from ._config_render import Render
from ._config_requests import Requests
from ._exceptions import ConfigError
from ._settings import (
    FromArgs,
    LibraryOnly,
    count,
    flag,
    fraction,
    non_negative,
    section,
    setting,
)
from ._urls import parse_base_url
from ._version import __version__
from .control import Rules, ScopeKind, default_scope

if TYPE_CHECKING:
    from .parse import Rule

DEFAULT_USER_AGENT = f"sitecrawl/{__version__}"


def ca_bundle_file(text: str) -> str:
    """``--ca-bundle FILE``: a PEM file of CA certificates, read now (a bad one is said at
    once, not at the first https:// request)."""
    from ._tls import tls_context

    try:
        tls_context(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


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

    obey_robots: bool = setting(
        True, flag("--ignore-robots", kind="false", help="do not fetch or obey robots.txt")
    )
    max_crawl_delay: float = setting(
        30.0,
        flag(
            "--max-crawl-delay",
            parse=non_negative,
            metavar="SECONDS",
            help="cap on a robots.txt Crawl-delay (default %(default)s)",
        ),
    )
    sitemaps: bool = setting(
        True, flag("--no-sitemaps", kind="false", help="do not seed the crawl from sitemaps")
    )
    follow_nofollow: bool = setting(
        False, flag("--follow-nofollow", kind="true", help='also follow rel="nofollow" links')
    )
    #: In a later crawl of a state file, ask with the previous crawl's ``ETag`` /
    #: ``Last-Modified`` (``If-None-Match`` / ``If-Modified-Since``); a 304 reuses the record.
    revalidate: bool = setting(
        True,
        flag(
            "--no-revalidate",
            kind="false",
            help="in a later crawl of a state file, fetch every page in full (no If-None-Match"
            " / If-Modified-Since)",
        ),
    )
    per_host: int = setting(
        8,
        flag(
            "--per-host",
            parse=count(1),
            metavar="N",
            help="requests in flight per host at most (default %(default)s, never above"
            " --concurrency)",
        ),
    )
    delay: float = setting(
        0.0,
        flag(
            "--delay",
            parse=non_negative,
            metavar="SECONDS",
            help="minimum time between request starts on one host (default %(default)s)",
        ),
    )
    jitter: float = setting(
        0.0,
        flag(
            "--jitter",
            parse=fraction,
            metavar="FRACTION",
            help="lengthen each delay by a random 0..FRACTION of it (default %(default)s)",
        ),
    )
    retries: int = setting(
        2,
        flag(
            "--retries",
            parse=count(0),
            metavar="N",
            help="retries on timeouts, connection errors, 408/429/5xx (default %(default)s)",
        ),
    )
    backoff: float = setting(0.5, LibraryOnly("a tuning knob of the retries"))
    max_backoff: float = setting(60.0, LibraryOnly("a tuning knob of the retries"))
    adaptive: bool = setting(True, LibraryOnly("a tuning knob (tests and benchmarks turn it off)"))

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


#: ``--markdown-scope``: the page's main content, or the whole page (see
#: :func:`~sitecrawl.page_markdown`).
MarkdownScope = Literal["main", "full"]
MARKDOWN_SCOPES: tuple[MarkdownScope, ...] = ("main", "full")


@dataclass(frozen=True, kw_only=True, slots=True)
class CrawlConfig:
    """Everything a crawl needs to know, except where its state and output go.

    ``start_urls``: every start URL when there are several (``base_url`` is the first); the
    crawl's scope is the union of theirs. ``rules`` aims the crawl (:class:`Rules`: scope
    kind, include/exclude, strip-params, rewrites); ``subdomains=True`` is
    ``Rules(scope="subdomains")``."""

    base_url: str = setting(cli=FromArgs("URL: the first start URL"))
    start_urls: tuple[str, ...] = setting((), FromArgs("URL ...: every start URL"))
    rules: Rules = field(default_factory=Rules, metadata=section("crawl control"))
    limits: Limits = field(default_factory=Limits, metadata=section("limits"))
    timeouts: Timeouts = field(default_factory=Timeouts, metadata=section(""))
    politeness: Politeness = field(default_factory=Politeness, metadata=section("politeness"))
    user_agent: str = setting(
        DEFAULT_USER_AGENT,
        flag("--user-agent", metavar="UA", help="User-Agent header (default %(default)s)"),
        group="",
        keyword="user_agent",
    )
    #: A PEM file of the CA certificates to trust for https:// (in place of the system's, as
    #: curl's ``--cacert``); None: ``SSL_CERT_FILE`` when set, else the system's CAs.
    ca_bundle: str | None = setting(
        None,
        flag(
            "--ca-bundle",
            metavar="FILE",
            parse=ca_bundle_file,
            help="trust the CA certificates of this PEM file for https:// instead of the"
            " system's (default: SSL_CERT_FILE when set, else the system's)",
        ),
        group="",
        keyword="ca_bundle",
    )
    #: Headers, cookies, auth and proxy (:class:`Requests`).
    requests: Requests = field(
        default_factory=Requests,
        metadata=section(
            "requests (headers, cookies and auth go only to the crawl's own hosts)",
            keyword="requests",
        ),
    )
    subdomains: bool = setting(
        False,
        LibraryOnly("the command line's --subdomains is --scope subdomains"),
        keyword="subdomains",
    )
    #: Processes used: 1 parses on the event loop; N > 1 adds N - 1 parser processes.
    processes: int = setting(
        1,
        flag(
            "-p",
            "--processes",
            parse=count(1),
            help="processes to use: 1 parses on the event loop, N adds N-1 parser processes"
            " (default %(default)s)",
            cli_default=min(2, os.cpu_count() or 1),
            why="a library call may run beside other work, so it takes one process unless"
            " asked; the command line has the machine: one process per core, up to 2 (the"
            " event loop and one parser are what a crawl keeps busy)",
        ),
        group="",
        keyword="processes",
    )
    #: Fill each page's ``links`` (every link's text, rel and kind). None: only when the
    #: frontier stores pages (a state file), where reports and audits read them.
    link_details: bool | None = setting(
        None,
        LibraryOnly("the command line fills links when the crawl keeps a state file"),
        keyword="link_details",
    )
    #: Custom extraction rules (:class:`~sitecrawl.parse.Rule`), run on every HTML page;
    #: their values are each page's ``extracted``.
    extract: tuple[Rule, ...] = setting(
        (),
        (
            flag(
                "-x",
                "--extract",
                kind="append",
                metavar="NAME=SPEC",
                help="a value to extract from every page (repeatable): SPEC is"
                " css:SELECTOR[@ATTR], xpath:EXPR, regex:PATTERN or jsonld:JMESPATH, optionally"
                " after all:, count: or exists:",
                custom=True,
            ),
            flag(
                "--extract-file",
                metavar="RULES.toml",
                help="extraction rules from a TOML file: NAME = 'SPEC', or [NAME] tables with"
                " spec, type (str, int, float, bool, date) and when (a URL regex)",
                custom=True,
            ),
        ),
        group="custom extraction",
        keyword="extract",
    )
    #: Each HTML page's content as GitHub-flavoured Markdown (``Page.markdown``), made in the
    #: parser processes (:func:`~sitecrawl.page_markdown`; the ``markdown`` extra).
    markdown: bool = setting(
        False,
        flag(
            "--markdown",
            kind="true",
            help="give each HTML page's main content as Markdown (the markdown field; needs"
            " pip install 'sitecrawl[markdown]')",
        ),
        group="content",
        keyword="markdown",
    )
    markdown_scope: MarkdownScope = setting(
        "main",
        flag(
            "--markdown-scope",
            choices=MARKDOWN_SCOPES,
            help="with --markdown: main (default: navigation, header, footer, sidebars and"
            " banners dropped) or full (the whole page, scripts and styles out)",
        ),
        group="content",
        keyword="markdown_scope",
    )
    #: Read each HTML page's structured data (JSON-LD, Microdata, RDFa) into its
    #: ``structured_data`` (:mod:`sitecrawl.parse._structured`). Off by default: it costs
    #: about 9 % more instructions a page on the bench site, over the 5 % budget
    #: (bench/RESULTS.md section 26), and every item goes into every record (output, state).
    structured_data: bool = setting(
        False,
        flag(
            "--structured-data",
            kind="true",
            help="read each page's JSON-LD, Microdata and RDFa (the structured_data field and"
            " export table; its schema.org and rich-result checks)",
        ),
        group="custom extraction",
    )
    #: Sign each HTML page's main content (the Markdown with ``--markdown``, else the body
    #: text without navigation, header, footer, sidebars and forms) for the near-duplicate
    #: audit run after the crawl (:mod:`sitecrawl.audit._neardup`): exact duplicates by
    #: hash, near ones by MinHash at :attr:`near_dup_threshold`. Off by default: 512 bytes
    #: more a stored page (bench/RESULTS.md section 30).
    near_duplicates: bool = setting(
        False,
        flag(
            "--near-duplicates",
            kind="true",
            help="sign each page's main content for the near-duplicate audit (the"
            " near_duplicates export table, the exact_duplicate and near_duplicate checks)",
        ),
        group="content",
    )
    #: The estimated Jaccard similarity of two pages' 5-word shingles at which they are near
    #: duplicates (stored with the crawl; the audit after it reads it).
    near_dup_threshold: float = setting(
        0.9,
        flag(
            "--near-dup-threshold",
            parse=fraction,
            metavar="F",
            help="with --near-duplicates: the similarity (0-1] from which two pages are near"
            " duplicates (default %(default)s)",
        ),
        group="content",
    )
    #: With a web archive output, also fetch each page's requisites in scope (images, srcset,
    #: stylesheets and what their CSS names, scripts: :mod:`sitecrawl.fetch._assets`), archived
    #: only: not followed, not page rows. Without a recorder (an archive), nothing is fetched.
    archive_assets: bool = setting(
        False,
        flag(
            "--archive-assets",
            kind="true",
            help="with -o .warc.gz/.wacz: also archive each page's images (srcset too),"
            " stylesheets and what their CSS names (fonts, backgrounds, @import), scripts and"
            " icons in scope (robots.txt and the host's delay obeyed; not followed, no rows)",
        ),
        group="content",
    )
    #: Rendering in headless Chromium (:class:`Render`); ``never`` by default.
    render: Render = field(default_factory=Render, metadata=section("rendering (JavaScript)"))
    #: Let redirects, links, sitemaps and robots.txt lead to addresses of a more private class
    #: than the start URLs' (public < private < loopback: an intranet crawl). Link-local
    #: addresses (169.254.0.0/16, the cloud metadata service; fe80::/10) stay refused.
    allow_private_redirects: bool = setting(
        False,
        flag(
            "--allow-private-redirects",
            kind="true",
            help="let redirects, links and sitemaps lead to more private addresses than the"
            " start URLs' (public < private < loopback; an intranet crawl); link-local addresses"
            " (169.254.0.0/16: the cloud metadata service) stay refused",
        ),
        group="politeness",
    )
    #: Connect to public addresses only, the start URLs' included, whatever they resolve to
    #: then or later (a name rebound to a private one is refused): a server's API callers.
    public_only: bool = setting(
        False, LibraryOnly("a server's policy for its API callers (sitecrawl serve sets it)")
    )

    def __post_init__(self) -> None:
        # The start URLs, canonicalised once here (a bad one: InvalidURL, a ConfigError's
        # sibling under SitecrawlError): everything after reads them as they are.
        object.__setattr__(self, "base_url", parse_base_url(self.base_url))
        starts = tuple(parse_base_url(url) for url in self.start_urls)
        object.__setattr__(self, "start_urls", starts)
        if self.processes < 1:
            raise ConfigError(f"processes must be at least 1, got {self.processes}")
        if not 0 < self.near_dup_threshold <= 1:
            raise ConfigError(f"near_dup_threshold is in (0, 1], not {self.near_dup_threshold}")
        if self.markdown_scope not in MARKDOWN_SCOPES:
            raise ConfigError(f"markdown scope is main or full, not {self.markdown_scope!r}")
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
        return default_scope(self.base_url)
