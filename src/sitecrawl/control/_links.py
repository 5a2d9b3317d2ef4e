"""Which discovered links go to the frontier: the trap guard and the once-per-URL decision.

:class:`LinkTargets` turns a page's links into ``(url, key)`` pairs to queue: each distinct
URL is rewritten and decided once (:class:`~._rules.LinkRules`: scope, include/exclude), then
checked against :class:`TrapGuard` (over-long URLs, query-string and path traps). Pure, no I/O.
"""

from __future__ import annotations

import re

from .._urls import url_key
from ._rules import LinkRules

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
