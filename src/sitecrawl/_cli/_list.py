"""``crawl --list SOURCE``: the URLs of a list crawl and its default state file.

SOURCE is a file (``-``: stdin) of URLs, one a line, blank lines and ``#`` comments skipped;
or a sitemap URL (``https://example.com/sitemap.xml``; an index and gzip are read through, as
for sitemap seeding). The URLs are kept in order, each once (the crawl's dedupe key).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from typing import TYPE_CHECKING, TextIO

from ._common import UsageError, base_url_of, run_async

if TYPE_CHECKING:
    from .._config import CrawlConfig


def add_start_options(parser: argparse.ArgumentParser) -> None:
    """``URL [URL ...]``, ``--list SOURCE`` and ``--follow``."""
    parser.add_argument(
        "urls",
        nargs="*",
        metavar="URL",
        help="start URLs; the scope is the union of theirs (the first names the crawl)",
    )
    parser.add_argument(
        "--list",
        metavar="SOURCE",
        help="fetch exactly the URLs of SOURCE, in order, each once, nothing followed:"
        " a file of URLs (one a line, # comments; - for stdin) or a sitemap URL",
    )
    parser.add_argument(
        "--follow",
        action="store_true",
        help="with --list: also crawl from the listed URLs, within their scope",
    )


def take_starts(args: argparse.Namespace) -> str | None:
    """Check the start URLs, or read the ``--list`` (a file: its URLs become ``args.urls``;
    a sitemap URL: :func:`take_sitemap` reads it); ``--list`` without ``--follow`` crawls
    depth 0 only. ``args.url`` is the first start URL. Returns the list's source, or None."""
    source: str | None = args.list
    if source is None:
        if args.follow:
            raise UsageError("--follow goes with --list")
        if not args.urls:
            raise UsageError("a start URL is required (or --list FILE)")
        args.urls = [base_url_of(argparse.Namespace(url=url)) for url in args.urls]
    else:
        if args.urls:
            raise UsageError("give start URLs or --list, not both")
        args.urls = [source] if is_url(source) else read_list(source)
        if not args.follow:
            if args.max_depth is not None:
                raise UsageError("--max-depth goes with --list --follow (a list is not followed)")
            args.max_depth = 0
    args.url = args.urls[0]
    return source


def take_sitemap(args: argparse.Namespace, config: CrawlConfig, source: str) -> None:
    """``--list SITEMAP_URL``: its URLs become ``args.urls`` (errors met said on stderr)."""
    urls, errors = run_async(sitemap_urls(config, base_url_of(args)))
    if not args.quiet:
        for error in errors:
            print(f"sitemap {error}", file=sys.stderr)
    args.urls = unique(urls, source)
    args.url = args.urls[0]


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


def read_list(source: str, stdin: TextIO | None = None) -> list[str]:
    """The URLs of a list file (``-``: stdin); a bad line is a :class:`UsageError`."""
    from .._exceptions import SitecrawlError
    from .._urls import parse_base_url

    try:
        if source == "-":
            text = (stdin or sys.stdin).read()
        else:
            with open(source, encoding="utf-8-sig") as file:
                text = file.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(f"cannot read --list {source}: {reason}") from None
    urls = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            urls.append(parse_base_url(line))
        except SitecrawlError as exc:
            raise UsageError(f"--list {source}, line {number}: {exc}") from None
    return unique(urls, source)


def unique(urls: list[str], source: str) -> list[str]:
    """``urls`` in order, each page once (by its dedupe key); none is a :class:`UsageError`."""
    from .._urls import url_key

    kept: dict[str, str] = {}
    for url in urls:
        kept.setdefault(url_key(url), url)
    if not kept:
        raise UsageError(f"--list {source} holds no URL")
    return list(kept.values())


async def sitemap_urls(config: CrawlConfig, url: str) -> tuple[list[str], list[str]]:
    """The page URLs the sitemap (or sitemap index, gzip or not) at ``url`` lists, fetched as
    the crawl fetches them (:meth:`~sitecrawl.fetch.FetchStack.sitemap_urls`); and the errors
    met on the way."""
    from ..control import CrawlScope
    from ..fetch import FetchStack

    async with FetchStack(config) as stack:
        found = await stack.sitemap_urls(url, CrawlScope([url], "domain"), declared=[url])
    if not found.files:
        raise UsageError(f"--list {url}: no sitemap could be read there")
    return found.urls, found.errors


def list_state_path(source: str, urls: list[str]) -> str:
    """``<host>-list-<digest>.sitecrawl.db``: the first URL's host, and 8 hex digits of the
    SHA-256 of the list (its URLs, one a line; for a sitemap, its URL), so the same list
    resumes the same crawl and another list gets a file of its own."""
    from .._urls import split_host

    listed = source if is_url(source) else "\n".join(urls)
    digest = hashlib.sha256(listed.encode()).hexdigest()[:8]
    return f"{split_host(urls[0]).replace(':', '_')}-list-{digest}.sitecrawl.db"
