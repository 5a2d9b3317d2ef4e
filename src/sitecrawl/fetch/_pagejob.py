"""One request's lifecycle: robots gate -> polite fetch with retries, hop by hop -> record.

:class:`PoliteClient` is HTTP as the crawler must do it: every request waits for its host's
slot (:mod:`._throttle`), reports back how it went, and is retried on timeouts, connection
errors and 408/429/500/502/503/504 with exponential backoff and jitter; its
:meth:`~PoliteClient.follow` is the one redirect loop, under the :class:`FollowPolicy` each
caller brings (pages, sitemaps, robots.txt, link checks). Failures come back as values, never
raised. :class:`PageJob` turns one frontier :class:`Request` into one
:class:`Page` and the links to follow from it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Unpack

from .._config import CrawlConfig
from .._exceptions import (
    BodyTooLarge,
    ConnectError,
    FetchError,
    FetchTimeout,
    HTTPStatusError,
    ParseError,
    ProtocolError,
    RedirectOutOfScope,
)
from .._log import logger
from .._models import Page, Request, body_hash
from .._urls import split_host
from ..parse import Extracted, pdf_available
from ..throttle import Throttle, parse_retry_after
from ._alternates import link_alternates, merge_alternates
from ._fetcher import Fetcher, FollowPolicy, GetOptions, Response
from ._gate import RobotsGate
from ._redirects import RedirectTrail
from ._robots import page_directives, product_token

if TYPE_CHECKING:
    from ..control import CrawlScope
    from ..parse import PdfText

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Methods a failed request is retried with: repeating one changes nothing more than once
#: (RFC 9110, 9.2.2). A POST is made once.
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
_RETRY_ERRORS = (FetchTimeout, ConnectError, ProtocolError)
#: ``(body, charset, url) -> Extracted``: decoding and parsing, wherever they run.
ParseFn = Callable[[bytes, "str | None", str], Awaitable[Extracted]]
#: ``(body, url) -> PdfText``: reading a PDF, wherever it runs.
PdfFn = Callable[[bytes, str], Awaitable["PdfText"]]
#: Said once in the crawl's notes when a PDF is met and the ``pdf`` extra is missing.
PDF_UNREAD = "PDFs recorded unread: pip install 'sitecrawl[pdf]' to read them"
#: ``url -> None``, awaited before a hop is requested; raises :class:`FetchError` to refuse it.
HopCheck = Callable[[str], Awaitable[None]]
#: ``(page, response, parsed) -> data to record``: the render step (:mod:`.render`), if any.
RenderFn = Callable[[Page, Response, Extracted], Awaitable[Extracted]]


def backoff_delay(attempt: int, base: float, cap: float, rng: random.Random) -> float:
    """Seconds before retry number ``attempt + 1``: ``base * 2**attempt`` capped at ``cap``,
    then "equal jitter" (between half and all of it), so retries of many pages spread out."""
    full = min(cap, base * 2.0**attempt)
    return full / 2 + rng.uniform(0.0, full / 2)


class PoliteClient:
    """The fetcher behind per-host slots, with retries. One per crawl."""

    def __init__(self, fetcher: Fetcher, throttle: Throttle, config: CrawlConfig) -> None:
        self._fetcher = fetcher
        self._throttle = throttle
        self._politeness = config.politeness
        self._rng = random.Random()
        self.retries = 0  # retries made, all requests together

    async def get(
        self, url: str, **options: Unpack[GetOptions]
    ) -> tuple[Response | FetchError, int]:
        """GET (or HEAD; a rendered page's POST or PUT with its body ``data``) one hop of
        ``url`` politely (``options``: :meth:`Fetcher.get`'s); return the response (or the
        error) and the number of attempts made (one for a POST: it is not
        :data:`IDEMPOTENT`)."""
        politeness = self._politeness
        method = options.get("method", "GET")
        slot = self._throttle.slot(split_host(url))
        attempt = 0
        while True:
            await slot.acquire()
            started = time.monotonic()
            result: Response | FetchError | None = None
            retry_after: float | None = None
            try:
                result = await self._fetcher.get(url, **options)
            except FetchError as exc:
                result = exc
            finally:
                # Cancellation lands here too: the slot must never leak a request in flight.
                now = time.monotonic()
                status = result.status if isinstance(result, Response) else None
                if status is not None and status >= 400 and isinstance(result, Response):
                    retry_after = parse_retry_after(result.retry_after, cap=politeness.max_backoff)
                # Latency is time to headers: a big body is not a busy server.
                latency = result.ttfb_ms / 1000 if isinstance(result, Response) else now - started
                slot.release(status=status, latency=latency, retry_after=retry_after, now=now)
            assert result is not None
            attempt += 1
            retryable = (
                isinstance(result, _RETRY_ERRORS)
                if isinstance(result, FetchError)
                else result.status in RETRY_STATUSES
            )
            if not retryable or attempt > politeness.retries or method not in IDEMPOTENT:
                if retryable and attempt > 1:
                    why = result if isinstance(result, FetchError) else f"HTTP {result.status}"
                    logger.warning("gave up on %s after %d attempts: %s", url, attempt, why)
                return result, attempt
            self.retries += 1
            delay = backoff_delay(
                attempt - 1, politeness.backoff, politeness.max_backoff, self._rng
            )
            if retry_after is not None:
                delay = max(delay, retry_after)
            await asyncio.sleep(delay)

    async def follow(
        self,
        trail: RedirectTrail,
        *,
        method: str = "GET",
        check: HopCheck | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Response | FetchError:
        """Request ``trail.current`` politely (:meth:`get`), then each redirect hop its policy
        allows, until an answer that is not a redirect. ``check(url)``, when given, is awaited
        before each hop and stops the chain by raising (robots.txt). Returns the last response
        or the error that ended the chain (the trail's ``hops`` say how far it went and
        ``attempts`` how many tries its last request took); never raises a
        :class:`FetchError`. Called again on the same trail, it goes on from where it stopped.
        ``extra_headers`` go with the first request of the trail only."""
        max_bytes = trail.policy.max_bytes
        while True:
            trail.attempts = 0
            try:
                if check is not None:
                    await check(trail.current)
            except FetchError as exc:
                return exc
            result, trail.attempts = await self.get(
                trail.current,
                read_any=max_bytes is not None,
                max_bytes=max_bytes,
                method=method,
                extra_headers=None if trail.hops else extra_headers,
                pdf_bytes=trail.policy.pdf_bytes,
            )
            if isinstance(result, FetchError) or result.location is None:
                return result
            try:
                trail.follow(result.status, result.location, set_cookie=result.set_cookie)
            except FetchError as exc:  # a loop, too many hops, out of scope
                return exc


def validators(previous: Page | None, markdown: bool = False) -> dict[str, str]:
    """The conditional request's headers from an earlier crawl's record of the URL: none
    unless it answered 200 without error and sent an ``ETag`` or ``Last-Modified``, and was
    not rendered (a rendered page's content comes from the data its scripts load, not from
    its HTML: an unchanged application shell says nothing of it, so it is rendered again);
    with ``markdown``, none for an HTML page recorded without its Markdown (a ``304`` would
    leave it without)."""
    if (
        previous is None
        or previous.status != 200
        or previous.error is not None
        or previous.rendered
        or (markdown and previous.markdown is None and previous.word_count is not None)
    ):
        return {}
    headers = {}
    if previous.etag:
        headers["If-None-Match"] = previous.etag
    if previous.last_modified:
        headers["If-Modified-Since"] = previous.last_modified
    return headers


def failed(page: Page, exc: FetchError | ParseError) -> None:
    """Record ``exc`` in ``page``: its message, its kind, and where an out-of-scope redirect
    pointed."""
    page.error = str(exc)
    page.error_kind = exc.kind
    if isinstance(exc, RedirectOutOfScope):
        page.location = exc.location


class PageJob:
    """Turns a frontier request into a page record and the links to follow from it."""

    def __init__(
        self,
        client: PoliteClient,
        gate: RobotsGate,
        scope: CrawlScope,
        config: CrawlConfig,
        parse: ParseFn,
        read_pdf: PdfFn | None = None,
    ) -> None:
        self._parse = parse
        #: Reads a PDF's body: None when ``Limits.max_pdf_bytes`` is 0, or without the ``pdf``
        #: extra (then a PDF met puts :data:`PDF_UNREAD` in ``notes``, once).
        self._read_pdf = read_pdf if config.limits.max_pdf_bytes else None
        self._pdf_missing = self._read_pdf is not None and not pdf_available()
        if self._pdf_missing:
            self._read_pdf = None
        self.notes: list[str] = []
        #: Rendering in Chromium (``--render``): None renders nothing.
        self.render: RenderFn | None = None
        #: Extraction rule -> pages whose value could not be converted to its type.
        self.unconverted: Counter[str] = Counter()
        self._client = client
        #: robots.txt, asked before each hop (:class:`RobotsGate`).
        self.gate = gate
        self._config = config
        self._token = product_token(config.user_agent)
        hops = config.limits.max_redirects
        pdf_bytes = config.limits.max_pdf_bytes if self._read_pdf else None
        self._policy = FollowPolicy(scope=scope, max_redirects=hops, pdf_bytes=pdf_bytes)
        self._anywhere = FollowPolicy(scope=None, max_redirects=hops, pdf_bytes=pdf_bytes)

    def trail(self, url: str, *, anywhere: bool = False) -> RedirectTrail:
        """A redirect trail from ``url`` that stays in the crawl's scope (``anywhere``: that
        goes to any http(s) URL, as a start URL's does)."""
        return RedirectTrail(url, self._anywhere if anywhere else self._policy)

    async def fetch(
        self, trail: RedirectTrail, extra_headers: Mapping[str, str] | None = None
    ) -> Response:
        """Fetch ``trail.current`` as the crawl does: robots.txt first, then a polite GET
        (host slot, retries) of every hop, counted in ``trail.attempts``. Returns the final
        response; raises :class:`FetchError` (:class:`BlockedByRobots` included)."""
        result = await self._client.follow(
            trail, check=self.gate.check, extra_headers=extra_headers
        )
        if isinstance(result, FetchError):
            raise result
        return result

    async def run(
        self, request: Request, previous: Page | None = None
    ) -> tuple[Page, list[str], list[str]]:
        """The page of ``request``, the links to follow from it, and what the page makes a
        browser load that its links do not name (the parser's
        :attr:`~sitecrawl.parse.Extracted.requisites`: only with ``--archive-assets``).
        ``previous``, the record of an earlier crawl, makes the request conditional on its
        validators: a ``304`` gives that record back, ``revalidated``, with its links."""
        page = Page(url=request.url, depth=request.depth, attempts=0)
        # A start or list URL (depth 0) is fetched wherever it redirects.
        trail = self.trail(request.url, anywhere=request.depth == 0)
        conditions = validators(previous, self._config.markdown)
        try:
            result = await self.fetch(trail, conditions)
        except FetchError as exc:
            page.attempts = trail.attempts
            page.status = exc.status
            failed(page, exc)
            page.redirects = trail.hops
            if trail.hops:
                page.final_url = trail.current
            return page, [], []
        page.redirects = trail.hops
        page.attempts = trail.attempts
        if previous is not None and conditions and result.status == 304 and not trail.hops:
            return *self._reuse(previous, page, result), []
        requisites: list[str] = []
        return page, await self._fill(page, result, requisites), requisites

    def _reuse(self, previous: Page, page: Page, response: Response) -> tuple[Page, list[str]]:
        """The previous record, revalidated by a ``304``, and the links it followed."""
        page = replace(
            previous,
            url=page.url,
            depth=page.depth,
            attempts=page.attempts,
            response_time_ms=response.elapsed_ms,
            in_sitemap=False,
            revalidated=True,
            # A PDF's text is its content, read with or without --markdown: always kept.
            markdown=(
                previous.markdown
                if self._config.markdown or previous.page_count is not None
                else None
            ),
            etag=response.etag or previous.etag,
            last_modified=response.last_modified or previous.last_modified,
        )
        if page.error is not None or not page.links:
            return page, list(page.outgoing_links) if page.error is None else []
        follow_all = self._config.politeness.follow_nofollow
        links = [
            target
            for target, _, rel, kind in page.links
            if kind == "a" and (follow_all or "nofollow" not in (rel or "").lower().split())
        ]
        return page, list(dict.fromkeys(links))

    async def _fill(self, page: Page, response: Response, requisites: list[str]) -> list[str]:
        """Copy the response into the page record; return the links to follow (and put the
        parser's requisites in ``requisites``)."""
        page.final_url = response.url
        page.status = response.status
        page.content_type = response.content_type
        page.response_time_ms = response.elapsed_ms
        page.size_bytes = response.size_bytes
        page.etag = response.etag
        page.last_modified = response.last_modified
        if response.body is not None:
            page.body_hash = body_hash(response.body)
        status = response.status
        if status >= 400:
            failed(page, HTTPStatusError(f"HTTP {status}", url=page.url, status=status))
        if response.is_pdf and status < 300:
            return await self._pdf(page, response)
        if response.body is None or status >= 300:
            return []
        try:
            data = await self._parse(response.body, response.charset, response.url)
        except ParseError as exc:
            failed(page, exc)
            return []
        if self.render is not None:
            data = await self.render(page, response, data)
        for name, value in data.fields.items():  # the record's fields the parser filled
            setattr(page, name, value)
        requisites += data.requisites
        if alternates := link_alternates(response.link, response.url):  # the Link header's
            page.hreflang = merge_alternates(page.hreflang, alternates)
        if data.unconverted:
            self.unconverted.update(data.unconverted)
        if data.markdown_error is not None:  # the other fields kept: a record with its error
            failed(page, ParseError(data.markdown_error, url=page.url))
        directives = page_directives(data.robots_meta, response.robots_tag, self._token)
        page.indexable = not directives.noindex
        if response.truncated:
            cap = self._config.limits.max_bytes
            failed(page, BodyTooLarge(f"body cut at {cap} bytes", url=page.url, status=status))
        if directives.nofollow:
            return []
        if self._config.politeness.follow_nofollow:
            every: list[str] = data.fields["outgoing_links"]
            return every
        return data.follow_links

    async def _pdf(self, page: Page, response: Response) -> list[str]:
        """Read a PDF into its record (unless PDFs are not read); return its links to follow.
        A PDF over ``Limits.max_pdf_bytes`` is ``too_large``, not read (nor all downloaded);
        an encrypted or broken one is an error of its kind (:mod:`.parse._pdf`)."""
        if self._read_pdf is None:
            if self._pdf_missing and PDF_UNREAD not in self.notes:
                self.notes.append(PDF_UNREAD)
            return []
        if response.truncated or response.body is None:
            why = f"PDF over {self._config.limits.max_pdf_bytes} bytes: not read"
            failed(page, BodyTooLarge(why, url=page.url, status=response.status))
            return []
        try:
            pdf = await self._read_pdf(response.body, response.url)
        except ParseError as exc:
            failed(page, exc)
            return []
        page.title = pdf.title
        page.page_count = pdf.page_count
        page.markdown = pdf.markdown
        page.word_count = pdf.word_count
        page.outgoing_links = pdf.outgoing_links
        if self._config.link_details:
            page.links = pdf.links
        directives = page_directives(None, response.robots_tag, self._token)
        page.indexable = not directives.noindex
        return [] if directives.nofollow else pdf.outgoing_links
