"""URL joining, normalization, the dedupe key and scope checks. Pure functions over strings.

Every URL sitecrawl keeps has been through the WHATWG parser (ada-url), so it is in canonical
form: scheme and host lowercased, default port dropped, dot segments resolved, percent-encoding
normalized. On such an ``href`` the key and the scope check are plain string slicing, which is
what keeps per-link work cheap on the hot path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import ada_url

from ._exceptions import InvalidURL

if TYPE_CHECKING:
    from ._rules import LinkRules

_WEB_SCHEMES = ("http://", "https://")
#: A reference's scheme as the URL parser reads it (no whitespace, which it would strip first).
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
# "mailto:x", "ftp://x" name a scheme; "localhost:8080/x" is a host and a port.
_HAS_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)")


def parse_base_url(url: str) -> str:
    """Return the canonical href of a crawl's start URL, or raise :class:`InvalidURL`.

    A URL typed without a scheme (``example.com/docs``) is taken as ``https://``.
    """
    text = url.strip()
    if not text:
        raise InvalidURL("empty URL", url=url)
    if not _HAS_SCHEME.match(text):
        text = "https://" + text
    try:
        href: str = ada_url.URL(text).href
    except ValueError:
        raise InvalidURL(f"invalid URL: {url!r}", url=url) from None
    if not href.startswith(_WEB_SCHEMES):
        raise InvalidURL(f"unsupported URL scheme (only http and https): {url!r}", url=url)
    host = split_host(href)
    if not host:
        raise InvalidURL(f"URL has no host: {url!r}", url=url)
    return strip_fragment(href)


def join(base: str, href: str) -> str | None:
    """Resolve ``href`` against ``base`` per WHATWG; None if invalid or not http(s).

    The fragment is dropped: ``page#a`` and ``page#b`` are the same resource.
    """
    try:
        url: str = ada_url.join_url(base, href)
    except ValueError:
        return None
    if not url.startswith(_WEB_SCHEMES):
        return None
    return strip_fragment(url)


def strip_fragment(href: str) -> str:
    cut = href.find("#")
    return href if cut < 0 else href[:cut]


def split_host(href: str) -> str:
    """The ``host[:port]`` of a canonical http(s) href, without userinfo."""
    start = href.index("://") + 3
    end = href.find("/", start)
    authority = href[start:] if end < 0 else href[start:end]
    at = authority.rfind("@")
    return authority if at < 0 else authority[at + 1 :]


def url_key(href: str) -> str:
    """The dedupe key of a canonical http(s) href: :func:`normalize_url` without re-parsing.

    Two URLs with the same key are one page, whatever their scheme.
    """
    start = href.index("://") + 3
    hash_at = href.find("#", start)
    if hash_at >= 0:
        href = href[:hash_at]
    slash = href.find("/", start)
    if slash < 0:
        return href[start:]
    authority = href[start:slash]
    at = authority.rfind("@")
    if at >= 0:
        authority = authority[at + 1 :]
    rest = href[slash:]
    query_at = rest.find("?")
    if query_at < 0:
        return authority + rest.rstrip("/")
    return authority + rest[:query_at].rstrip("/") + rest[query_at:]


def normalize_url(url: str) -> str:
    """Normalize a URL into the key that identifies a page (the course's ``normalize_url``).

    Scheme, fragment, default port and trailing slash are dropped; the host is lowercased;
    the path's case and the query string are kept::

        >>> normalize_url("https://Blog.Boot.dev/path/")
        'blog.boot.dev/path'
        >>> normalize_url("http://x.com/a?b=1#c")
        'x.com/a?b=1'

    Raises :class:`InvalidURL` for text that is not an http(s) URL.
    """
    return url_key(parse_base_url(url))


def base_directory(base: str) -> str:
    """A canonical href up to and including the last ``/`` of its path (query and fragment
    excluded)."""
    base = strip_fragment(base)
    query_at = base.find("?")
    return base[: base.rfind("/", 0, query_at if query_at >= 0 else len(base)) + 1]


#: Characters the WHATWG URL parser copies into an http(s) URL's path unchanged (none is in
#: the path percent-encode set), minus those that end or reshape a path or start a scheme:
#: ``%`` (escapes), ``\`` (a slash), ``?``, ``#``, ``:``.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=@/]+")


def _join_plain(raw: str, directory: str, origin: str) -> str | None:
    """:func:`join` of a plain path reference by string operations; None for any other.

    ``raw`` is plain when it is only ``_PLAIN_PATH`` characters and path-relative
    (``a/b.html``), path-absolute (``/a/b.html``, not ``//host``), or absolute on the base's
    own origin (``http://host:8080/a``). The parser has nothing to act on in such a reference
    (no scheme or authority of its own, no query, fragment, whitespace, backslash or escape,
    no character it would encode), so the result is the origin, then the base's directory
    path (for a relative reference) and ``raw``'s path verbatim, with dot segments resolved
    by the standard's rules: ``..`` removes the segment before it but never the root, ``.``
    is removed, and a last ``.`` or ``..`` leaves a trailing ``/``. ``directory`` and
    ``origin`` are cut from a canonical href, which the parser would reproduce unchanged.
    """
    if _PLAIN_PATH.fullmatch(raw):
        if raw[0] != "/":
            url = directory + raw
        elif raw[1:2] != "/":
            url = origin + raw
        else:
            return None  # "//host/a" names its own authority
    elif (
        raw.startswith(origin)
        and raw[len(origin) : len(origin) + 1] == "/"
        and _PLAIN_PATH.fullmatch(raw, len(origin))
    ):
        url = raw
    else:
        return None
    if "/." not in url:
        return url
    # Dot segments (or a segment such as ".well-known", which stays as it is).
    path = url[len(origin) :]
    if path.endswith(("/.", "/..")):
        path += "/"  # a last "." or ".." resolves as if a "/" followed it
    segments: list[str] = []
    for segment in path[1:].split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment != ".":
            segments.append(segment)
    return origin + "/" + "/".join(segments)


try:  # the same function in C, when it was built
    from ._speedups import join_plain as _join_plain_fast
except ImportError:
    _join_plain_fast = _join_plain


def _memo_key(raw: str, directory: str, origin: str) -> tuple[str, str] | None:
    """The memo key of a reference, or None when its resolution depends on the whole base:
    empty, ``?query``, ``#fragment``, leading whitespace, or a scheme-like prefix
    (``http:x`` is relative to an http base)."""
    if raw.startswith(_WEB_SCHEMES):
        return ("", raw)
    first = raw[:1]
    if first <= " " or first in "?#":
        return None
    colon = raw.find(":")
    if colon >= 0 and not 0 <= raw.find("/") < colon:
        return None
    if first == "/" and raw[1:2] not in "/\\":
        return (origin, raw)
    return (directory, raw)


class JoinCache:
    """:func:`join` over one crawl: plain path references by string operations, the others
    through a bounded memo. ``base`` must be a canonical href.

    A plain reference (:func:`_join_plain`: ``page-2.html``, ``../../css/site.css``, ``/a/b``,
    or an absolute URL on the base's own origin; most links) is resolved without the parser
    and not stored. Resolving any other reference that is not empty and starts with neither
    ``?``, ``#`` nor whitespace depends on the base only through its directory (scheme,
    authority and path up to the last ``/``), so ``(directory, href)`` is an exact memo key;
    an absolute http(s) reference does not depend on the base at all and a path-absolute one
    (``/x``) only on its origin, so those are keyed wider. Sites repeat the same external
    links on many pages, which makes many of those joins dictionary hits.
    """

    __slots__ = ("_max", "_memo")

    def __init__(self, max_entries: int = 100_000) -> None:
        self._memo: dict[tuple[str, str], str | None] = {}
        self._max = max_entries

    def join_each(self, base: str, hrefs: Iterable[str]) -> list[str | None]:
        """:func:`join` of each reference against ``base``, in order, memoized."""
        memo = self._memo
        join_plain = _join_plain_fast
        if len(memo) > self._max:
            memo.clear()
        base_only = strip_fragment(base)
        directory = base_directory(base)
        origin = directory[: directory.find("/", directory.index("://") + 3)]
        out: list[str | None] = []
        for raw in hrefs:
            url = join_plain(raw, directory, origin)
            if url is None and (cut := raw.find("#")) >= 0 and (cut == 0 or raw[cut - 1] > " "):
                # The fragment changes nothing before it, and join() drops it: "#top" is
                # the base itself, "page.html#s2" is "page.html". (Not after a space, which
                # the parser keeps there but would strip from the end of a cut reference.)
                raw = raw[:cut]
                url = join_plain(raw, directory, origin) if raw else base_only
            if (
                url is None
                and (scheme := _SCHEME.match(raw))
                and scheme.group(1).lower() not in ("http", "https")
            ):
                out.append(None)  # mailto:, tel:, javascript:, ftp:... whatever the base
                continue
            if url is None:
                memo_key = _memo_key(raw, directory, origin)
                if memo_key is None:
                    url = join(base, raw)
                else:
                    try:
                        url = memo[memo_key]
                    except KeyError:
                        url = memo[memo_key] = join(base, raw)
            out.append(url)
        return out


#: How many levels below the first page of a URL pattern its pages may be found before they
#: count as a chain (a calendar's "next month") for ``Limits.max_pattern_pages``.
PATTERN_DEPTH_SPAN = 20
#: A path naming one segment more often than this is a relative-link loop (``a/a/a/a``).
MAX_SEGMENT_REPEATS = 3
_DIGITS = re.compile(r"[0-9]+")
_MAX_PATTERNS = 100_000  # patterns remembered at once (those seen once go first)


def _repeats_a_segment(path: str) -> bool:
    if path.count("/") <= MAX_SEGMENT_REPEATS:
        return False
    counts: dict[str, int] = {}
    for segment in path.split("/")[1:]:
        if segment and not segment.isdigit():  # /2001/01/01/01: a date, not a loop
            counts[segment] = seen = counts.get(segment, 0) + 1
            if seen > MAX_SEGMENT_REPEATS:
                return True
    return False


class TrapGuard:
    """Bounds link traps the depth limit alone does not: URLs longer than
    ``max_url_length``; more than ``max_query_variants`` distinct query strings on one
    path (an infinite calendar's ``?month=``); and, unless ``max_pattern_pages`` is None,
    path traps. A path naming one (not numeric) segment more than
    :data:`MAX_SEGMENT_REPEATS` times is a loop (``a/a/a/a``: relative links on a page
    served at any path). A URL pattern (the path, digit runs folded to ``#``) past
    ``max_pattern_pages`` URLs takes no new URL found more than :data:`PATTERN_DEPTH_SPAN`
    levels below its first one (``/cal/2024/01`` linking the next month, forever); a big
    flat site (a million ``/item/N`` listed on shallow pages) and a pagination under the cap
    are not cut. :attr:`trapped` names what was cut.

    Memory stays bounded: at most ``max_query_variants`` keys are kept per path, only for
    URLs that have a query, and a count per pattern only for paths with digits."""

    __slots__ = (
        "_max_length",
        "_max_pattern",
        "_max_variants",
        "_patterns",
        "_variants",
        "trapped",
    )

    def __init__(
        self,
        *,
        max_url_length: int,
        max_query_variants: int,
        max_pattern_pages: int | None = None,
    ) -> None:
        self._max_length = max_url_length
        self._max_variants = max_query_variants
        self._max_pattern = max_pattern_pages
        self._variants: dict[str, set[str]] = {}
        self._patterns: dict[str, list[int]] = {}  # pattern -> [URLs, depth of the first]
        #: The path traps cut, each once: a pattern (``/cal/#/#``) or a looping path.
        self.trapped: list[str] = []

    def allows(self, href: str, key: str, depth: int = 0) -> bool:
        """May ``href`` (whose :func:`url_key` is ``key``), found at ``depth``, be queued?"""
        if len(href) > self._max_length:
            return False
        if self._max_pattern is not None and not self._path_allows(key, depth):
            return False
        query_at = key.find("?")
        if query_at < 0:
            return True
        variants = self._variants.setdefault(key[:query_at], set())
        if key in variants:
            return True
        if len(variants) >= self._max_variants:
            return False
        variants.add(key)
        return True

    def _path_allows(self, key: str, depth: int) -> bool:
        query_at = key.find("?")
        path = key if query_at < 0 else key[:query_at]
        if _repeats_a_segment(path):
            if not any(trap.startswith("looping paths") for trap in self.trapped):
                self.trapped.append(f"looping paths such as {key}")
            return False
        slash = path.find("/")
        if slash < 0 or not _DIGITS.search(path, slash):  # no digits: no pattern to count
            return True
        pattern = path[:slash] + _DIGITS.sub("#", path[slash:])  # the host kept as it is
        patterns = self._patterns
        entry = patterns.get(pattern)
        if entry is None:
            if len(patterns) >= _MAX_PATTERNS:
                self._patterns = patterns = {p: e for p, e in patterns.items() if e[0] > 1}
                if len(patterns) >= _MAX_PATTERNS:
                    patterns.clear()
            patterns[pattern] = [1, depth]
            return True
        assert self._max_pattern is not None
        if entry[0] >= self._max_pattern and depth > entry[1] + PATTERN_DEPTH_SPAN:
            if pattern not in self.trapped:
                self.trapped.append(pattern)
            return False
        entry[0] += 1
        return True


class LinkTargets:
    """Which links to offer the frontier, decided once per distinct URL: ``(url, key)`` for a
    URL not seen before that, rewritten by the crawl's rules (:class:`~._rules.LinkRules`),
    is in scope, passes the include/exclude rules and is not a trap (:class:`TrapGuard`).

    Links repeat across pages (navigation, breadcrumbs), and most pages of a large crawl link
    only to URLs seen before: a set difference (C speed) finds that and skips the page's
    links; only the new ones get a scope check, a key and a trap check. A URL offered once is
    not offered again: the frontier took it or deduplicated it, and would do the same again.
    Memory stays bounded: past ``max_entries`` the set is cleared, URLs are offered again and
    the frontier's own dedupe decides."""

    __slots__ = ("_filters", "_guard", "_max", "_rewrites", "_rules", "_seen", "rejected")

    def __init__(self, rules: LinkRules, guard: TrapGuard, max_entries: int = 100_000) -> None:
        self._rules = rules
        # Without rules, a link costs a scope check only: no regex, no rewrite.
        self._rewrites = rules.rules.rewrites
        self._filters = rules.filters
        self._guard = guard
        self._seen: set[str] = set()
        self._max = max_entries
        self.rejected = 0  # in-scope URLs the trap guard turned down (once per memo lifetime)

    @property
    def trapped(self) -> list[str]:
        """The path traps cut so far (:attr:`TrapGuard.trapped`)."""
        return self._guard.trapped

    def _classify(self, url: str, depth: int) -> tuple[str, str] | None:
        rules = self._rules
        if self._rewrites:
            rewritten = rules.rewrite(url)
            if rewritten is None:
                return None
            url = rewritten
        if not (rules.allows(url) if self._filters else rules.scope.contains(url)):
            return None
        key = url_key(url)
        if self._guard.allows(url, key, depth):
            return url, key
        self.rejected += 1
        return None

    def keyed(self, urls: list[str], depth: int = 0) -> list[tuple[str, str]]:
        """``(url, key)`` for each URL (found at ``depth``) to offer the frontier, in order
        (``url`` rewritten by the rules); the caller offers them (a URL is not returned twice
        while the memo holds it)."""
        seen = self._seen
        if len(seen) > self._max:
            seen.clear()
        new = set(urls).difference(seen)
        if not new:
            return []
        seen.update(new)
        out = []
        for url in urls:
            if url in new:
                new.discard(url)  # its first occurrence decides
                target = self._classify(url, depth)
                if target is not None:
                    out.append(target)
        return out
