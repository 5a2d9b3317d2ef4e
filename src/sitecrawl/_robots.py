"""robots.txt (RFC 9309) and robots directives. Pure rules, plus a small per-origin cache.

Parsing and matching are Protego's (longest match wins, Allow wins a tie, ``*`` and ``$``,
percent-encoding equivalence). Before Protego sees a file, :func:`prepare` applies two rules of
RFC 9309 / Google's reference parser that Protego does not: a line with an unknown key does not
end a group, and a ``user-agent`` value is matched on its product token (up to the first
space). What the rules say about a fetched file depends on how the fetch went
(:meth:`RobotsRules.from_fetch`): 2xx parses, 4xx allows everything, 5xx or no answer
disallows everything *for now* (the entry expires, the file is fetched again later).

The per-URL check is one Protego ``can_fetch`` on a cached parser: no I/O, no re-parse.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from protego import Protego

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
ROBOTS_MAX_REDIRECTS = 5
UNAVAILABLE_RETRY_AFTER = 30.0  # seconds before a 5xx/unreachable robots.txt is fetched again

_KNOWN_KEYS = frozenset(
    {
        "user-agent",
        "useragent",
        "user agent",
        "allow",
        "disallow",
        "dissallow",
        "dissalow",
        "disalow",
        "diasllow",
        "disallaw",
        "sitemap",
        "sitemaps",
        "site-map",
        "crawl-delay",
        "crawl delay",
        "request-rate",
        "request rate",
        "visit-time",
        "visit time",
        "host",
    }
)
_KEY_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z _-]*?)\s*:\s*(.*)$")
_TOKEN = re.compile(r"[A-Za-z_-]+")


def product_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched on: ``sitecrawl/1.0 (+url)`` ->
    ``sitecrawl`` (lowercased; RFC 9309 matching is case-insensitive)."""
    match = _TOKEN.match(user_agent.strip())
    return match.group(0).lower() if match else user_agent.strip().lower()


def prepare(text: str) -> str:
    """Drop lines whose key is unknown (they must not end a group) and cut ``user-agent``
    values at the first space (``User-agent: Foo Bar`` is the group of ``Foo``)."""
    out: list[str] = []
    for line in text.splitlines():
        match = _KEY_LINE.match(line.split("#", 1)[0])
        if match is None:
            out.append(line)
            continue
        key = match.group(1).strip().lower()
        if key not in _KNOWN_KEYS:
            continue
        if key in ("user-agent", "useragent", "user agent"):
            value = match.group(2).strip()
            out.append(f"user-agent: {value.split()[0] if value else ''}")
        else:
            out.append(line)
    return "\n".join(out)


class RobotsRules:
    """What one origin's robots.txt says to one product token."""

    __slots__ = ("_allow", "_parser", "crawl_delay", "expires", "reason", "sitemaps", "token")

    def __init__(
        self,
        parser: Protego | None,
        token: str,
        *,
        allow: bool = True,
        reason: str | None = None,
        expires: float | None = None,
    ) -> None:
        self._parser = parser
        self._allow = allow
        self.token = token
        #: Why everything is disallowed for now (5xx, unreachable); None otherwise.
        self.reason = reason
        #: ``time.monotonic()`` after which the file should be fetched again; None: never.
        self.expires = expires
        delay = parser.crawl_delay(token) if parser is not None else None
        self.crawl_delay: float | None = delay if delay is not None and delay >= 0 else None
        self.sitemaps: tuple[str, ...] = tuple(parser.sitemaps) if parser is not None else ()

    @classmethod
    def parse(cls, text: str, token: str) -> RobotsRules:
        return cls(Protego.parse(prepare(text)), token.lower())

    @classmethod
    def allow_all(cls, token: str) -> RobotsRules:
        return cls(None, token)

    @classmethod
    def disallow_all(cls, token: str, reason: str, *, retry_after: float) -> RobotsRules:
        return cls(None, token, allow=False, reason=reason, expires=time.monotonic() + retry_after)

    @classmethod
    def from_fetch(
        cls,
        token: str,
        status: int | None,
        body: bytes | None,
        *,
        error: str | None = None,
        retry_after: float = UNAVAILABLE_RETRY_AFTER,
    ) -> RobotsRules:
        """RFC 9309 section 2.3.1: the rules implied by fetching robots.txt.

        ``status`` None means no response (``error`` says why). 2xx: parse the body. 4xx:
        "unavailable", allow everything (429 excepted: it means "come back later", so it is
        treated like 5xx). 3xx left over (more than five redirects): unavailable, allow. 5xx
        or no response: "unreachable", disallow everything until ``retry_after`` seconds
        have passed.
        """
        if status is not None and 200 <= status < 300:
            text = (body or b"")[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace")
            return cls.parse(text.removeprefix("\ufeff"), token)
        if status is not None and status < 500 and status != 429:
            return cls.allow_all(token)
        why = f"HTTP {status}" if status is not None else (error or "no response")
        return cls.disallow_all(token, f"robots.txt unreachable ({why})", retry_after=retry_after)

    def allowed(self, url: str) -> bool:
        if self._parser is None:
            return self._allow
        return self._parser.can_fetch(url, self.token)

    def expired(self, now: float) -> bool:
        return self.expires is not None and now >= self.expires


def robots_url(href: str) -> str:
    """``https://host:port/robots.txt`` for any canonical http(s) href."""
    return origin(href) + "/robots.txt"


def origin(href: str) -> str:
    """``scheme://host:port`` of a canonical http(s) href (robots.txt is per origin)."""
    end = href.find("/", href.index("://") + 3)
    return href if end < 0 else href[:end]


RobotsFetch = Callable[[str], Awaitable["tuple[int | None, bytes | None, str | None]"]]


class RobotsCache:
    """One :class:`RobotsRules` per origin, fetched once (concurrent askers share the fetch)
    and fetched again when an "unreachable" entry expires.

    ``fetch(url)`` returns ``(status, body, error)`` after following redirects; it is the
    thin I/O shell supplied by the crawler.
    """

    def __init__(
        self,
        fetch: RobotsFetch,
        token: str,
        *,
        retry_after: float = UNAVAILABLE_RETRY_AFTER,
        on_rules: Callable[[str, RobotsRules], None] | None = None,
    ) -> None:
        self._fetch = fetch
        self.token = token
        self._retry_after = retry_after
        self._on_rules = on_rules
        self._rules: dict[str, RobotsRules] = {}
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}

    def cached(self, href: str) -> RobotsRules | None:
        rules = self._rules.get(origin(href))
        if rules is None or rules.expired(time.monotonic()):
            return None
        return rules

    async def rules(self, href: str) -> RobotsRules:
        key = origin(href)
        rules = self._rules.get(key)
        if rules is not None and not rules.expired(time.monotonic()):
            return rules
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            status, body, error = await self._fetch(key + "/robots.txt")
            rules = RobotsRules.from_fetch(
                self.token, status, body, error=error, retry_after=self._retry_after
            )
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: no "never retrieved" warning if nobody waits
            raise
        finally:
            del self._pending[key]
        self._rules[key] = rules
        if self._on_rules is not None:
            self._on_rules(key, rules)
        future.set_result(rules)
        return rules


@dataclass(frozen=True, slots=True)
class Directives:
    """Page-level robots directives (``<meta name="robots">``, ``X-Robots-Tag``)."""

    noindex: bool = False
    nofollow: bool = False


_NONE = Directives()


def page_directives(meta: str | None, header: str | None, token: str) -> Directives:
    """Combine ``<meta name="robots" content>`` and ``X-Robots-Tag`` values.

    ``none`` means both. ``header`` holds one line per ``X-Robots-Tag`` header; a header may
    name a user agent (``otherbot: noindex, nofollow``), and then its directives apply only
    when that is our product token.
    """
    if not meta and not header:
        return _NONE
    words: list[str] = []
    if meta:
        words += meta.lower().replace(",", " ").split()
    for line in (header or "").lower().splitlines():  # one line per X-Robots-Tag header
        applies = True
        for part in line.split(","):
            name, colon, rest = part.partition(":")
            name = name.strip()
            if colon and name and " " not in name and name not in _DIRECTIVES:
                applies = name == token  # "otherbot: noindex, nofollow": both for otherbot
                part = rest
            if applies:
                words += part.split()
    none = "none" in words
    return Directives(noindex=none or "noindex" in words, nofollow=none or "nofollow" in words)


_DIRECTIVES = frozenset({"noindex", "nofollow", "none", "all", "unavailable_after", "max-snippet"})
