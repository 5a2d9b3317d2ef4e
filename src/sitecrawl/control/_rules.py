"""Which discovered URLs a crawl follows, and how they are rewritten first. Pure, no I/O.

A crawl is aimed by three things, applied to every discovered link in this order:

1. **Rewriting** (before dedupe, so variants are one page): query parameters whose names match
   a glob of ``strip_params`` are dropped (``utm_*``; ``*`` drops the whole query), then each
   ``rewrite`` regex substitution runs in order, and the result is parsed again as a URL.
2. **Scope**: the hosts (and, for ``prefix``, the path) of the start URLs. ``site``: a start
   URL's host and port, with or without ``www.``; ``subdomains``: also its subdomains;
   ``domain``: every host of its registrable domain (the Public Suffix List's eTLD+1; an IP
   address or a one-label name is its own domain), same port; ``prefix``: a start URL's site
   and its directory (``/book/`` crawls ``/book/...``). Several start URLs: the union.
3. **Rules**: when ``include`` regexes are given, a URL must match one; it must match no
   ``exclude`` regex (``re.search`` on the absolute, rewritten URL).

Start URLs and list URLs are fetched whatever the rules say. A link that is not followed stays
in its page's ``outgoing_links``; :class:`LinkRules` counts each refusal by the rule that made
it, for the summary and for ``sitecrawl explain``.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import ada_url

from .._exceptions import ConfigError
from .._settings import flag, setting
from .._urls import strip_fragment
from ._scope import SCOPE_KINDS, CrawlScope, ScopeKind, default_scope, registrable_domain

__all__ = [
    "SCOPE_KINDS",
    "CrawlScope",
    "LinkRules",
    "Rules",
    "ScopeKind",
    "Verdict",
    "default_scope",
    "parse_strip_params",
    "registrable_domain",
]

#: Why a URL is or is not followed (the first three are refusals).
OUT_OF_SCOPE = "out of scope"
NOT_INCLUDED = "no --include matched"
EXCLUDED = "--exclude"  # followed by the regex in the reason: "--exclude REGEX"
FOLLOWED = "in scope"


@dataclass(frozen=True, kw_only=True, slots=True)
class Rules:
    """How a crawl is aimed (see the module docstring). ``scope`` None picks the default:
    ``prefix`` when the (first) start URL's path is a directory other than ``/``, else
    ``site``. Every regex is compiled here: a bad one is a :class:`ConfigError` naming it."""

    scope: ScopeKind | None = setting(
        None,
        (
            flag(
                "--scope",
                choices=SCOPE_KINDS,
                help="what to crawl: the start host (site), its folder (prefix), its subdomains"
                " too, or its whole registrable domain (default: prefix when the start URL is a"
                " folder other than /, else site)",
            ),
            flag(
                "--subdomains",
                kind="const",
                const="subdomains",
                help="the same as --scope subdomains",
            ),
        ),
    )
    include: tuple[str, ...] = setting(
        (),
        flag(
            "--include",
            kind="append",
            metavar="REGEX",
            help="follow only URLs matching REGEX (Python re.search; repeatable: any of them)",
        ),
    )
    exclude: tuple[str, ...] = setting(
        (),
        flag(
            "--exclude",
            kind="append",
            metavar="REGEX",
            help="never follow URLs matching REGEX (repeatable)",
        ),
    )
    strip_params: tuple[str, ...] = setting(
        (),
        flag(
            "--strip-params",
            metavar="NAMES",
            to_config=lambda text: parse_strip_params(text),
            help="drop these query parameters from discovered URLs (comma-separated globs:"
            " 'utm_*,fbclid'; '*' drops the whole query)",
        ),
    )
    rewrite: tuple[tuple[str, str], ...] = setting(
        (),
        flag(
            "--rewrite",
            kind="pairs",
            metavar=("REGEX", "REPLACEMENT"),
            help="rewrite discovered URLs (re.sub, repeatable, applied in order)",
        ),
    )

    def __post_init__(self) -> None:
        if self.scope is not None and self.scope not in SCOPE_KINDS:
            raise ConfigError(f"scope must be one of {', '.join(SCOPE_KINDS)}, got {self.scope!r}")
        for option, patterns in (
            ("--include", self.include),
            ("--exclude", self.exclude),
            ("--rewrite", tuple(pattern for pattern, _ in self.rewrite)),
        ):
            for pattern in patterns:
                _compile(option, pattern)
        for pattern, replacement in self.rewrite:
            try:
                re.compile(pattern).sub(replacement, "")
            except (re.error, IndexError) as exc:
                raise ConfigError(
                    f"--rewrite {pattern!r} {replacement!r}: bad replacement: {exc}"
                ) from None
        for name in self.strip_params:
            if not name or "=" in name or "&" in name:
                raise ConfigError(f"--strip-params: {name!r} is not a parameter name or glob")

    @property
    def rewrites(self) -> bool:
        return bool(self.strip_params or self.rewrite)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (stored with a crawl's state): lists for tuples."""
        return {
            "scope": self.scope,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "strip_params": list(self.strip_params),
            "rewrite": [list(pair) for pair in self.rewrite],
        }

    @classmethod
    def from_dict(cls, stored: dict[str, Any]) -> Rules:
        """The inverse of :meth:`to_dict` (absent keys: their defaults)."""
        return cls(
            scope=stored.get("scope"),
            include=tuple(stored.get("include", ())),
            exclude=tuple(stored.get("exclude", ())),
            strip_params=tuple(stored.get("strip_params", ())),
            rewrite=tuple((str(p), str(r)) for p, r in stored.get("rewrite", ())),
        )

    def describe(self) -> str:
        """The rules as command-line flags (``--scope prefix --exclude '[?&]sort='``)."""
        from shlex import quote

        words = [] if self.scope is None else ["--scope", self.scope]
        words += [w for pattern in self.include for w in ("--include", quote(pattern))]
        words += [w for pattern in self.exclude for w in ("--exclude", quote(pattern))]
        if self.strip_params:
            words += ["--strip-params", quote(",".join(self.strip_params))]
        for pattern, replacement in self.rewrite:
            words += ["--rewrite", quote(pattern), quote(replacement)]
        return " ".join(words) or "no rules (the default scope)"


def _compile(option: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"{option} {pattern!r}: not a valid regular expression: {exc}") from None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the crawl does with one URL: ``url`` is the rewritten URL (None when rewriting
    made it invalid), ``follow`` whether it would be queued, ``reason`` the scope or rule that
    decided."""

    url: str | None
    follow: bool
    reason: str


@dataclass(slots=True)
class LinkRules:
    """The compiled :class:`Rules` of one crawl over its :class:`CrawlScope`."""

    scope: CrawlScope
    rules: Rules
    refused: Counter[str] = field(default_factory=Counter)  # reason -> distinct URLs
    _include: tuple[re.Pattern[str], ...] = ()
    _exclude: tuple[tuple[str, re.Pattern[str]], ...] = ()
    _rewrite: tuple[tuple[re.Pattern[str], str], ...] = ()
    _strip_all: bool = False
    _strip: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        rules = self.rules
        self._include = tuple(re.compile(p) for p in rules.include)
        self._exclude = tuple((p, re.compile(p)) for p in rules.exclude)
        self._rewrite = tuple((re.compile(p), r) for p, r in rules.rewrite)
        self._strip_all = "*" in rules.strip_params
        if rules.strip_params:
            globs = "|".join(fnmatch.translate(glob) for glob in rules.strip_params)
            self._strip = re.compile(globs)

    @property
    def filters(self) -> bool:
        """True when include/exclude rules exist (scope alone needs no per-URL regex)."""
        return bool(self._include or self._exclude)

    def rewrite(self, url: str) -> str | None:
        """``url`` with stripped parameters and the rewrites applied, in canonical form;
        None when a rewrite produced something that is not an http(s) URL."""
        if self._strip and "?" in url:
            url = self._strip_params(url)
        if not self._rewrite:
            return url
        for pattern, replacement in self._rewrite:
            url = pattern.sub(replacement, url)
        try:
            href: str = ada_url.URL(url).href
        except ValueError:
            return None
        if not href.startswith(("http://", "https://")):
            return None
        return strip_fragment(href)

    def _strip_params(self, url: str) -> str:
        url = strip_fragment(url)
        base, _, query = url.partition("?")
        if self._strip_all:
            return base
        strip = self._strip
        assert strip is not None
        kept = [
            part for part in query.split("&") if part and not strip.match(part.partition("=")[0])
        ]
        return base + "?" + "&".join(kept) if kept else base

    def verdict(self, url: str) -> Verdict:
        """Whether the crawl follows ``url`` (a link as found, before rewriting) and why."""
        rewritten = self.rewrite(url) if self.rules.rewrites else url
        if rewritten is None:
            return Verdict(None, False, "--rewrite made it an invalid URL")
        return Verdict(rewritten, *self.decide(rewritten))

    def decide(self, url: str) -> tuple[bool, str]:
        """``(follow, reason)`` for an already rewritten URL."""
        if not self.scope.contains(url):
            return False, OUT_OF_SCOPE
        if self._include and not any(p.search(url) for p in self._include):
            return False, NOT_INCLUDED
        for text, pattern in self._exclude:
            if pattern.search(url):
                return False, f"{EXCLUDED} {text}"
        return True, FOLLOWED

    def allows(self, url: str) -> bool:
        """:meth:`decide` for the hot path: counts each refusal by its reason."""
        follow, reason = self.decide(url)
        if not follow and reason != OUT_OF_SCOPE:
            self.refused[reason] += 1
        return follow


def parse_strip_params(text: str) -> tuple[str, ...]:
    """``"utm_*, fbclid"`` -> ``("utm_*", "fbclid")``."""
    return tuple(name.strip() for name in text.split(",") if name.strip())
