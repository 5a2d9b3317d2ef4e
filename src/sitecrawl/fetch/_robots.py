"""robots.txt (RFC 9309) and robots directives. Pure rules, plus a small per-origin cache.

robots.txt is read exactly as Google's reference parser and matcher (google/robotstxt, the
reference behind RFC 9309) read it, and held to its test cases: a line is cut at 16,663
bytes; keys are matched on their start, with Google's accepted typos; a ``user-agent`` value
is matched on its product token (up to the first character outside ``[A-Za-z_-]``), and the
group of ``*`` applies only when no group names ours; unknown lines do not end a group; rule
patterns get non-ASCII bytes percent-encoded and escapes uppercased, and URLs are compared
as they come, never decoded (callers pass canonical, percent-encoded hrefs); the longest
matching pattern wins, Allow on a tie; ``*`` and a final ``$``; ``.../index.htm(l)`` also
allows ``.../``. (A matcher of our own: Protego normalizes both sides and matches user agents
by substring, and each is a case where it answers otherwise.) ``Crawl-delay``, which Google
ignores, is read for the same group.

What the rules say about a fetched file depends on how the fetch went
(:meth:`RobotsRules.from_fetch`): 2xx parses, 4xx allows everything, 5xx or no answer
disallows everything *for now* (the entry expires, the file is fetched again later).
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .._exceptions import FetchError, RobotsUnreachable
from .._log import logger

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB
ROBOTS_MAX_REDIRECTS = 5
UNAVAILABLE_RETRY_AFTER = 30.0  # seconds before a 5xx/unreachable robots.txt is fetched again

#: Google's parser keeps this many bytes of a line (a buffer of 2083 * 8, less its NUL).
MAX_LINE_BYTES = 2083 * 8 - 1
_SPACE = " \t\n\v\f\r"  # what the reference parser strips (C isspace)
_USER_AGENT_KEYS = ("user-agent", "useragent", "user agent")
_DISALLOW_KEYS = ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")
_SITEMAP_KEYS = ("sitemap", "site-map")
_CRAWL_DELAY_KEYS = ("crawl-delay", "crawl delay")
_TOKEN = re.compile(r"[A-Za-z_-]*")
_BLANK = re.compile(r"[ \t]+")
_PATH_START = re.compile(r"[/?;]")
_TO_ESCAPE = re.compile(rb"%[0-9A-Fa-f]{2}|[\x80-\xff]")


def product_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched on: ``sitecrawl/1.0 (+url)`` ->
    ``sitecrawl`` (lowercased; RFC 9309 matching is case-insensitive)."""
    token = _TOKEN.match(user_agent.strip())
    return token.group(0).lower() if token and token.group(0) else user_agent.strip().lower()


def _escape(match: re.Match[bytes]) -> bytes:
    found = match.group(0)
    return found.upper() if len(found) == 3 else b"%%%02X" % found[0]


def escape_pattern(value: str) -> str:
    """A rule's path as the matcher compares it: bytes past ASCII percent-encoded, the hex
    digits of escapes uppercased (``/caf\u00e9%aa`` -> ``/caf%C3%A9%AA``)."""
    if value.isascii() and "%" not in value:
        return value
    return _TO_ESCAPE.sub(_escape, value.encode("utf-8", "surrogateescape")).decode("ascii")


def _key_value(line: str) -> tuple[str, str] | None:
    """``key: value`` (or ``key value``, when the line has exactly two words), key lowered,
    both stripped; None for a line without a key."""
    line = line.partition("#")[0].strip(_SPACE)
    sep = line.find(":")
    if sep < 0:
        blank = _BLANK.search(line)
        if blank is None or _BLANK.search(line, blank.end()) is not None:
            return None
        sep = blank.start()
    key = line[:sep].strip(_SPACE)
    return (key.lower(), line[sep + 1 :].strip(_SPACE)) if key else None


def _lines(text: str) -> list[str]:
    """The lines of a file, each cut at :data:`MAX_LINE_BYTES` bytes of UTF-8."""
    lines = text.replace("\r", "\n").split("\n")
    for i, line in enumerate(lines):
        if len(line) * 4 > MAX_LINE_BYTES and len(data := line.encode()) > MAX_LINE_BYTES:
            lines[i] = data[:MAX_LINE_BYTES].decode("utf-8", "surrogateescape")
    return lines


def path_params_query(url: str) -> str:
    """The part of a URL that rules match: path, params and query as they are, fragment
    dropped, ``/`` when empty (Google's ``GetPathParamsQuery``)."""
    start = 0
    if url.startswith("http"):  # the usual case, said quickly: "http://" or "https://"
        scheme = 7 if url.startswith("://", 4) else 8 if url.startswith("s://", 4) else -1
    else:
        scheme = -1
    if scheme < 0:
        start = 2 if url.startswith("//") else 0
        scheme = url.find("://", start)
        early = _PATH_START.search(url, start)
        if scheme < 0 or (early is not None and early.start() < scheme):
            scheme = start
        else:
            scheme += 3
    found = _PATH_START.search(url, scheme)
    if found is None:
        return "/"
    path_start = found.start()
    fragment = url.find("#", start)
    if 0 <= fragment < path_start:
        return "/"
    path = url[path_start:] if fragment < 0 else url[path_start:fragment]
    return path if path[0] == "/" else "/" + path


#: One rule: (priority, allow, pattern, matcher); the matcher is None for a plain prefix.
_Rule = tuple[int, bool, str, "Callable[[str], object] | None"]


def _rule(pattern: str, allow: bool) -> _Rule:
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    if "*" not in body and not anchored:
        return (len(pattern), allow, pattern, None)
    return (len(pattern), allow, pattern, wildcard_matcher(body, anchored))


def wildcard_matcher(body: str, anchored: bool) -> Callable[[str], bool]:
    """Whether a path matches ``body`` (``*``: any run of characters) from its start, and
    to its end when ``anchored``: each piece between stars is found leftmost after the one
    before, which is a match whenever one exists. (A regex of ``.*`` joins backtracks: a
    robots.txt line ``Disallow: /*a*a*a*a*a*a*b$`` held the event loop for hours on one
    100-character path.)"""
    first, *middle = body.split("*")
    last = middle.pop() if middle and anchored else None

    def match(path: str) -> bool:
        if not path.startswith(first):
            return False
        at = len(first)
        for piece in middle:
            found = path.find(piece, at)
            if found < 0:
                return False
            at = found + len(piece)
        if last is not None:
            return len(path) - len(last) >= at and path.endswith(last)
        return not anchored or at == len(path)  # (anchored here: no star at all)

    return match


@dataclass(slots=True)
class _Group:
    """The rules and crawl delay read for one token (its own group, or ``*``'s)."""

    rules: list[_Rule]
    delay: float | None = None

    def add(self, key: str, value: str) -> None:
        if key.startswith("allow"):
            pattern = escape_pattern(value)
            self.rules.append(_rule(pattern, True))
            slash = pattern.rfind("/")
            if slash >= 0 and pattern.startswith("/index.htm", slash):
                self.rules.append(_rule(pattern[: slash + 1] + "$", True))
        elif key.startswith(_DISALLOW_KEYS):
            self.rules.append(_rule(escape_pattern(value), False))
        else:  # crawl-delay
            try:
                delay = float(value)
            except ValueError:
                return
            if math.isfinite(delay) and delay >= 0:
                self.delay = delay


def _read(text: str, token: str) -> tuple[_Group, list[str]]:
    """The group that applies to ``token`` and the file's sitemaps: one pass, Google's
    grouping (user-agent lines open a group once a rule has been seen since the last)."""
    own, anyone = _Group([]), _Group([])
    named = everyone = separator = ever_named = False
    sitemaps: list[str] = []
    for line in _lines(text.removeprefix("\ufeff")):
        if not line or (found := _key_value(line)) is None:
            continue
        key, value = found
        if key.startswith(_USER_AGENT_KEYS):
            if separator:
                named = everyone = separator = False
            if value[:1] == "*" and (len(value) == 1 or value[1] in _SPACE):
                everyone = True
            elif (agent := _TOKEN.match(value)) and token and agent.group(0).lower() == token:
                named = ever_named = True
        elif key.startswith(("allow", *_DISALLOW_KEYS)) or key in _CRAWL_DELAY_KEYS:
            if not (named or everyone):
                continue
            if key not in _CRAWL_DELAY_KEYS:
                separator = True
                if not value:
                    continue  # an empty pattern matches with priority 0: no effect
            (own if named else anyone).add(key, value)
        elif key.startswith(_SITEMAP_KEYS):
            sitemaps.append(value)
    return (own if ever_named else anyone), sitemaps


class RobotsRules:
    """What one origin's robots.txt says to one product token."""

    __slots__ = (
        "_allow",
        "_plain",
        "_rules",
        "_wild",
        "crawl_delay",
        "expires",
        "failure",
        "reason",
        "sitemaps",
        "token",
    )

    def __init__(
        self,
        token: str,
        *,
        group: _Group | None = None,
        sitemaps: list[str] | None = None,
        allow: bool = True,
        reason: str | None = None,
        expires: float | None = None,
        failure: FetchError | None = None,
    ) -> None:
        self.token = token
        self._allow = allow
        # Longest first, Allow before Disallow on a tie: the first match decides.
        self._rules = sorted(group.rules, key=lambda r: (-r[0], not r[1])) if group else []
        #: Every plain pattern at once: a path that starts with none skips them all.
        self._plain = tuple(r[2] for r in self._rules if r[3] is None)
        #: The other patterns, in the same order, as (allow, matcher).
        self._wild = [(allow, match) for _, allow, _, match in self._rules if match is not None]
        #: Why everything is disallowed for now (5xx, unreachable); None otherwise.
        self.reason = reason
        #: The host's own failure, when robots.txt was not reached because the host was not
        #: (its name did not resolve, it refused the connection: ``FetchError.unreached``).
        self.failure = failure
        #: ``time.monotonic()`` after which the file should be fetched again; None: never.
        self.expires = expires
        self.crawl_delay: float | None = group.delay if group else None
        self.sitemaps: tuple[str, ...] = tuple(sitemaps or ())

    @classmethod
    def parse(cls, text: str, token: str) -> RobotsRules:
        token = token.lower()
        group, sitemaps = _read(text, token)
        return cls(token, group=group, sitemaps=sitemaps)

    @classmethod
    def allow_all(cls, token: str) -> RobotsRules:
        return cls(token)

    @classmethod
    def disallow_all(
        cls, token: str, reason: str, *, retry_after: float, failure: FetchError | None = None
    ) -> RobotsRules:
        expires = time.monotonic() + retry_after
        return cls(token, allow=False, reason=reason, expires=expires, failure=failure)

    @classmethod
    def from_fetch(
        cls,
        token: str,
        status: int | None,
        body: bytes | None,
        *,
        error: FetchError | str | None = None,
        retry_after: float = UNAVAILABLE_RETRY_AFTER,
    ) -> RobotsRules:
        """RFC 9309 section 2.3.1: the rules implied by fetching robots.txt.

        ``status`` None means no response (``error`` says why). 2xx: parse the body. 4xx:
        "unavailable", allow everything (429 excepted: it means "come back later", so it is
        treated like 5xx). 3xx left over (more than five redirects): unavailable, allow. 5xx
        or no response: "unreachable", disallow everything until ``retry_after`` seconds
        have passed; when the host itself was not reached, its URLs fail as it did
        (:meth:`refusal`).
        """
        if status is not None and 200 <= status < 300:
            text = (body or b"")[:ROBOTS_MAX_BYTES].decode("utf-8", errors="replace")
            return cls.parse(text, token)
        if status is not None and status < 500 and status != 429:
            return cls.allow_all(token)
        why = f"HTTP {status}" if status is not None else (str(error or "") or "no response")
        failure = error if isinstance(error, FetchError) and error.unreached else None
        reason = f"robots.txt unreachable ({why})"
        return cls.disallow_all(token, reason, retry_after=retry_after, failure=failure)

    def refusal(self, url: str) -> FetchError:
        """What keeps ``url`` from being fetched while the rules are "unreachable": the host's
        own failure (a name that does not resolve is ``dns``, not a robots.txt matter), else
        :class:`RobotsUnreachable`."""
        if self.failure is not None:
            return self.failure.for_url(url)
        return RobotsUnreachable(self.reason or "robots.txt unreachable", url=url)

    def allowed(self, url: str) -> bool:
        """Whether ``url`` (percent-encoded, as a canonical href is) may be fetched."""
        if not self._rules:
            return self._allow
        path = path_params_query(url)
        if not path.startswith(self._plain):  # no plain pattern matches: the others
            for allow, wild in self._wild:
                if wild(path):
                    return allow
            return True
        for _, allow, pattern, match in self._rules:
            if path.startswith(pattern) if match is None else match(path):
                return allow
        return True

    def expired(self, now: float) -> bool:
        return self.expires is not None and now >= self.expires


def origin(href: str) -> str:
    """``scheme://host:port`` of a canonical http(s) href (robots.txt is per origin)."""
    end = href.find("/", href.index("://") + 3)
    return href if end < 0 else href[:end]


RobotsFetch = Callable[[str], Awaitable["tuple[int | None, bytes | None, FetchError | None]"]]


class RobotsCache:
    """One :class:`RobotsRules` per origin, fetched once (concurrent askers share the fetch)
    and fetched again when an "unreachable" entry expires.

    ``fetch(url)`` returns ``(status, body, error)`` after following redirects (``error``:
    why no response came); it is the thin I/O shell supplied by the crawler.
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
        if rules.reason is not None:
            why = rules.reason if rules.failure is None else str(rules.failure)
            logger.warning("%s: %s: nothing there is fetched for %g s", key, why, self._retry_after)
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
