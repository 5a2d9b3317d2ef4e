"""What the MCP tools do (:mod:`._mcp`), each a config handed to the library: the crawl
driver (:meth:`~sitecrawl.AsyncCrawler.run`), the link check of ``sitecrawl check``
(:class:`~sitecrawl.audit.LinkChecker`, :func:`~sitecrawl.audit.check_outcome`), the diff of
``sitecrawl diff`` (:mod:`sitecrawl._diff_crawls`). Results are TypedDicts (the tools'
output schemas), bounded by the caps below; a failure is a :class:`ToolError` of one line."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.exceptions import ToolError
from typing_extensions import TypedDict

from .._config import CrawlConfig
from .._config_limits import Limits
from .._crawler import AsyncCrawler
from .._diff import Change, ChangeSet
from .._diff_crawls import between, compare
from .._exceptions import SitecrawlError
from .._models import Page
from ..control import CrawlScope, Rules
from ..frontier import SqliteFrontier
from ..sinks import Sink

if TYPE_CHECKING:
    from ._policy import TargetGuard

MAX_CRAWL_PAGES = 500
DEFAULT_PAGES = 50
DEFAULT_CHECK_PAGES = 100
MAX_LISTED = 200
MAX_PAGE_MARKDOWN = 2_000
MAX_TOTAL_MARKDOWN = 100_000
MAX_MARKDOWN = 50_000
MAX_SECONDS = 120.0
MAX_BROKEN = 100
MAX_REFERRERS = 5
MAX_RULES = 50
MAX_VALUE = 2_000
MAX_ITEMS = 100
MAX_CHANGES = 200


@dataclass(frozen=True, slots=True)
class Reach:
    """What a tool may reach: state files under ``root`` (None: anywhere), URLs
    ``url_allowed`` accepts and ``guard`` does not refuse (the server's private targets)."""

    root: str | None = None
    url_allowed: Callable[[str], bool] | None = None
    guard: TargetGuard | None = None


class PageRow(TypedDict):
    url: str
    status: int | None
    title: str | None
    depth: int
    error_kind: str | None
    markdown: str | None


class CrawlResult(TypedDict):
    url: str
    pages_crawled: int
    errors: int
    pages: list[PageRow]
    truncated: bool
    notes: list[str]


class MarkdownResult(TypedDict):
    url: str
    final_url: str | None
    title: str | None
    markdown: str
    truncated: bool


class Referrer(TypedDict):
    url: str
    anchor_text: str | None


class BrokenRow(TypedDict):
    url: str
    status: int | None
    error: str | None
    internal: bool
    pages: int
    links: int
    referrers: list[Referrer]


class CheckResult(TypedDict):
    url: str
    pages_crawled: int
    targets_checked: int
    broken: list[BrokenRow]
    broken_total: int
    truncated: bool


class ExtractResult(TypedDict):
    url: str
    status: int | None
    values: dict[str, Any]


class ChangeRow(TypedDict):
    url: str
    kind: str
    field: str | None
    old: Any
    new: Any
    severity: str


class DiffResult(TypedDict):
    since: str
    until: str
    counts: dict[str, int]
    changes: list[ChangeRow]
    changes_total: int
    truncated: bool


async def _config(allowed: Reach, url: str, **settings: Any) -> CrawlConfig:
    if not url.lower().startswith(("http://", "https://")):
        raise ToolError(f"url: an http:// or https:// URL, not {url!r}")
    try:
        # private targets refused (a guard): at every connection too (a name rebound since)
        config = CrawlConfig(base_url=url, public_only=allowed.guard is not None, **settings)
    except SitecrawlError as exc:
        raise ToolError(str(exc)) from None
    if allowed.url_allowed is not None and not allowed.url_allowed(config.base_url):
        raise ToolError(f"url: {config.base_url} is not a host this server may crawl")
    if allowed.guard is not None:
        refused = await allowed.guard(config.base_url, {})
        if refused is not None:
            raise ToolError(str(refused))
    return config


class _Pages(Sink):
    """The run's pages, in order."""

    def __init__(self) -> None:
        self.pages: list[Page] = []

    def write(self, page: Page) -> None:
        self.pages.append(page)

    def close(self) -> None:
        pass


async def _run(config: CrawlConfig, seconds: float = MAX_SECONDS) -> tuple[list[Page], Any]:
    """The crawl of ``config`` (in memory) by the library's driver, stopped after
    ``seconds``: its pages and stats."""
    pages = _Pages()
    try:
        async with AsyncCrawler(config.base_url, config=config, keep_pages=False) as crawler:
            await crawler.run([pages], stop_at=time.monotonic() + seconds)
    except SitecrawlError as exc:
        raise ToolError(str(exc)) from None
    return pages.pages, crawler.stats


def _one_page(config: CrawlConfig) -> CrawlConfig:
    """Only the start page: no links followed, no sitemaps (``sitecrawl markdown``'s)."""
    return replace(
        config,
        limits=replace(config.limits, max_pages=1, max_depth=0),
        politeness=replace(config.politeness, sitemaps=False),
    )


def _cut(text: str | None, limit: int) -> tuple[str | None, bool]:
    if text is None or len(text) <= limit:
        return text, False
    return text[:limit], True


async def crawl(
    reach: Reach,
    url: str,
    max_pages: int,
    scope: Any,
    include: list[str],
    exclude: list[str],
    *,
    markdown: bool,
) -> CrawlResult:
    config = await _config(
        reach,
        url,
        rules=Rules(scope=scope, include=tuple(include), exclude=tuple(exclude)),
        limits=Limits(max_pages=min(max_pages, MAX_CRAWL_PAGES)),
        markdown=markdown,
    )
    pages, stats = await _run(config)
    budget = MAX_TOTAL_MARKDOWN
    rows: list[PageRow] = []
    for page in pages[:MAX_LISTED]:
        text, _ = _cut(page.markdown, min(MAX_PAGE_MARKDOWN, budget))
        budget -= len(text or "")
        rows.append(
            {
                "url": page.url,
                "status": page.status,
                "title": page.title,
                "depth": page.depth,
                "error_kind": page.error_kind,
                "markdown": text,
            }
        )
    return {
        "url": config.base_url,
        "pages_crawled": len(pages),
        "errors": stats.errors,
        "pages": rows,
        "truncated": len(pages) > MAX_LISTED,
        "notes": list(stats.notes),
    }


def _failed(page: Page | None) -> ToolError:
    if page is None:
        return ToolError("the page was not fetched")
    if page.error is not None:
        return ToolError(
            f"{page.url}: {page.error}" + (f" ({page.error_kind})" if page.error_kind else "")
        )
    return ToolError(f"{page.url}: HTTP {page.status}")


async def markdown(reach: Reach, url: str, scope: Any) -> MarkdownResult:
    config = _one_page(await _config(reach, url, markdown=True, markdown_scope=scope))
    pages, _ = await _run(config)
    page = pages[0] if pages else None
    if page is None or page.error is not None or (page.status or 0) >= 400:
        raise _failed(page)
    if page.markdown is None:
        raise ToolError(f"{page.url}: not an HTML page ({page.content_type}): no Markdown")
    text, cut = _cut(page.markdown, MAX_MARKDOWN)
    return {
        "url": page.url,
        "final_url": page.final_url,
        "title": page.title,
        "markdown": text or "",
        "truncated": cut,
    }


async def check(reach: Reach, url: str, max_pages: int, *, external: bool) -> CheckResult:
    from ..audit import LinkChecker, check_outcome, link_targets

    config = await _config(reach, url, limits=Limits(max_pages=min(max_pages, MAX_CRAWL_PAGES)))
    config = replace(config, link_details=True)  # the check reads every page's links
    started = time.monotonic()
    pages, _ = await _run(config)
    scope = CrawlScope(list(config.starts), config.scope_kind)
    targets = link_targets(pages, scope, external=external, followed=True)
    checked: dict[str, Any] = {}
    if targets:
        async with LinkChecker(config, scope) as checker:
            deadline = started + MAX_SECONDS
            await checker.check_until(targets, deadline=deadline, stop=asyncio.Event())
            checked = dict(checker.results)
    outcome = check_outcome(pages, config.base_url, checked)
    broken: list[BrokenRow] = [
        {
            "url": link.target_url,
            "status": link.status,
            "error": link.error,
            "internal": link.internal,
            "pages": link.pages,
            "links": link.links,
            "referrers": [
                {"url": ref.source_url, "anchor_text": ref.anchor_text}
                for ref in link.referrers[:MAX_REFERRERS]
            ],
        }
        for link in outcome.broken[:MAX_BROKEN]
    ]
    return {
        "url": config.base_url,
        "pages_crawled": len(pages),
        "targets_checked": len(checked),
        "broken": broken,
        "broken_total": len(outcome.broken),
        "truncated": len(outcome.broken) > MAX_BROKEN,
    }


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return value[:MAX_VALUE]
    if isinstance(value, list):
        return [_bounded(item) for item in value[:MAX_ITEMS]]
    return value


async def extract(reach: Reach, url: str, rules: Mapping[str, str]) -> ExtractResult:
    from ..parse import Extraction

    if not rules or len(rules) > MAX_RULES:
        raise ToolError(f"rules: from 1 to {MAX_RULES} rules {{name: spec}}")
    try:
        compiled = Extraction.from_specs(rules).rules
    except SitecrawlError as exc:
        raise ToolError(f"rules: {exc}") from None
    config = _one_page(await _config(reach, url, extract=compiled))
    pages, _ = await _run(config)
    page = pages[0] if pages else None
    if page is None or page.error is not None:
        raise _failed(page)
    values = {rule.name: _bounded(page.extracted.get(rule.name)) for rule in compiled}
    return {"url": page.url, "status": page.status, "values": values}


def _state_path(reach: Reach, name: str) -> str:
    """A state file the tool may read: under ``root`` when there is one."""
    if reach.root is None:
        path = Path(name).expanduser()
    else:
        root = Path(reach.root).resolve()
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            raise ToolError(f"state: {name} is not in the server's data directory")
    if not path.is_file():
        raise ToolError(f"state: no state file {name}")
    return os.fspath(path)


def _result(found: ChangeSet) -> DiffResult:
    changes: list[Change] = found.changes
    rows: list[ChangeRow] = [
        {
            "url": change.url,
            "kind": change.kind,
            "field": change.field,
            "old": _bounded(change.old),
            "new": _bounded(change.new),
            "severity": change.severity,
        }
        for change in changes[:MAX_CHANGES]
    ]
    return {
        "since": found.since,
        "until": found.until,
        "counts": found.counts(),
        "changes": rows,
        "changes_total": len(changes),
        "truncated": len(changes) > MAX_CHANGES,
    }


async def diff(
    reach: Reach, state: str, other: str | None, old: int | None, new: int | None
) -> DiffResult:
    first = _state_path(reach, state)
    try:
        async with SqliteFrontier(first, create=False) as store:
            if other is not None:
                if old is not None or new is not None:
                    raise ToolError("from_crawl and to_crawl pick crawls of one state file")
                second = _state_path(reach, other)
                async with SqliteFrontier(second, create=False) as newer:
                    return _result(
                        ChangeSet(
                            changes=compare(store, store.crawl, newer, newer.crawl),
                            since=f"{state} (crawl {store.crawl})",
                            until=f"{other} (crawl {newer.crawl})",
                            command=f"{state} {other}",
                            base_url=newer.base_url,
                        )
                    )
            numbers = [crawl["id"] for crawl in store.crawls()]
            new = numbers[-1] if new is None else new
            if old is None:
                earlier = [number for number in numbers if number < new]
                if not earlier:
                    raise ToolError(f"{state} holds no crawl before crawl {new}")
                old = earlier[-1]
            for number in (old, new):
                if number not in numbers:
                    raise ToolError(f"{state} holds no crawl {number} (kept: {numbers})")
            return _result(between(store, state, old, new))
    except SitecrawlError as exc:
        raise ToolError(str(exc)) from None
