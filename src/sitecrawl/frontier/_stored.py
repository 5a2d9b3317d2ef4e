"""The stored crawl: what a durable frontier keeps of a crawl's config between runs and
workers (one codec, :func:`encode` / :func:`decode`), and whether a new run may go on with
it (one policy, :func:`take_or_refuse`). Every durable frontier (a SQLite state file's
``config`` meta row, a Redis crawl's ``config`` field) stores :func:`encode`'s dict when the
crawl begins and reads it back as :attr:`~sitecrawl.frontier.Frontier.config`;
:class:`~sitecrawl.AsyncCrawler` applies the policy to whatever frontier it is given.

The policy, the same for every stored option of the crawl's aim (:data:`AIM`: the rules,
the extraction rules, rendering, Markdown): a resumed or joined run that gives the same takes
it; one that gives none takes the stored one (and says so); one that gives another is refused with
:class:`~sitecrawl._exceptions.ResumeRefused` (the queue, the links seen and the pages stored
so far were decided by the stored one). Credentials are stored by name only: a run is given
them again or refused. The rest (concurrency, processes, page and depth limits, timeouts,
politeness, user agent, render tabs and timeout, proxy) is a resumed run's own; a process
joining a shared crawl brings only its concurrency, processes and credentials
(:func:`decode`, :func:`joined`): one politeness and one page budget hold for all workers.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from .._config import (
    DEFAULT_USER_AGENT,
    CrawlConfig,
    Politeness,
)
from .._config_limits import Limits, Timeouts
from .._config_render import Render
from .._config_requests import Requests
from .._exceptions import ResumeRefused
from ..control import Rules


def given_rules(config: CrawlConfig) -> Rules:
    """The config's rules, ``subdomains=True`` folded in as their scope."""
    if config.subdomains and config.rules.scope is None:
        return replace(config.rules, scope="subdomains")
    return config.rules


def encode(config: CrawlConfig) -> dict[str, Any]:
    """The config as a durable frontier stores it (JSON-ready): every setting, but of the
    credentials only which were given (:meth:`~sitecrawl.Requests.shape`, never a value or a
    proxy: a resumed or joined run is given them again)."""
    stored = dataclasses.asdict(replace(config, rules=Rules(), requests=Requests(), extract=()))
    stored["rules"] = given_rules(config).to_dict()
    stored["requests"] = config.requests.shape()
    stored["extract"] = [rule.to_json() for rule in config.extract]
    return stored


def decode(
    stored: Mapping[str, Any],
    *,
    requests: Requests | None = None,
    max_concurrency: int | None = None,
    processes: int | None = None,
) -> CrawlConfig:
    """The config of a stored crawl, for a process joining it without a config of its own
    (a Redis ``worker``): the stored settings with this process's ``requests`` (credentials
    and proxy; the site's cookies kept unless the crawl or this process said no),
    ``max_concurrency`` and ``processes`` when given. Missing credentials are refused by
    :func:`take_or_refuse`, not here."""
    from ..parse import Rule

    shape = stored.get("requests") or {}
    requests = requests or Requests()
    requests = replace(
        requests, keep_cookies=bool(shape.get("keep_cookies", True)) and requests.keep_cookies
    )
    limits = dict(stored.get("limits") or {})
    if max_concurrency is not None:
        limits["max_concurrency"] = max_concurrency
    return CrawlConfig(
        base_url=stored["base_url"],
        start_urls=tuple(stored.get("start_urls") or ()),
        rules=Rules.from_dict(stored.get("rules") or {}),
        limits=Limits(**limits),
        timeouts=Timeouts(**stored.get("timeouts") or {}),
        politeness=Politeness(**stored.get("politeness") or {}),
        user_agent=stored.get("user_agent") or DEFAULT_USER_AGENT,
        requests=requests,
        subdomains=bool(stored.get("subdomains", False)),
        processes=processes or 1,
        extract=tuple(Rule(**rule) for rule in stored.get("extract") or ()),
        render=render_here(stored),
        markdown=markdown_here(stored),
        markdown_scope=stored.get("markdown_scope") or "main",
        allow_private_redirects=bool(stored.get("allow_private_redirects", False)),
        structured_data=bool(stored.get("structured_data", False)),
        near_duplicates=bool(stored.get("near_duplicates", False)),
        near_dup_threshold=float(stored.get("near_dup_threshold") or 0.9),
    )


def joined(stored: Mapping[str, Any], given: CrawlConfig) -> CrawlConfig:
    """The config a command that names the crawl's site and options (``crawl URL --redis``)
    runs a shared crawl with: the stored one (one politeness, one page budget for every
    worker) with the command's own credentials, concurrency and processes, and its aim,
    which :func:`take_or_refuse` then takes or refuses."""
    config = decode(
        stored,
        requests=given.requests,
        max_concurrency=given.limits.max_concurrency,
        processes=given.processes,
    )
    names = ("rules", "subdomains", "extract", "render", "markdown", "markdown_scope")
    aim = {name: getattr(given, name) for name in names}
    return replace(config, **aim, ca_bundle=given.ca_bundle)  # (the CAs: this machine's)


@dataclass(frozen=True, slots=True)
class Aim:
    """One stored option of a crawl's aim: how to read it from a config and from the stored
    dict (absent: its default, as files of older versions left it out), its default (what a
    run gives when it gives none), how to say it and how a run takes it."""

    what: str
    them: str
    given: Callable[[CrawlConfig], Any]
    stored: Callable[[Mapping[str, Any]], Any]
    default: Any
    describe: Callable[[Any], str]
    take: Callable[[CrawlConfig, Any, Mapping[str, Any]], CrawlConfig]


def _extract(rules: list[dict[str, Any]]) -> str:
    words = []
    for rule in rules:
        words += ["-x", shlex.quote(f"{rule['name']}={rule['spec']}")]
        more = [f"{key} {rule[key]}" for key in ("type", "when") if rule.get(key)]
        if more:
            words.append(f"({', '.join(more)})")
    return " ".join(words) or "no extraction rules"


def _take_extract(config: CrawlConfig, value: Any, stored: Mapping[str, Any]) -> CrawlConfig:
    from ..parse import Rule

    return replace(config, extract=tuple(Rule(**rule) for rule in value))


def _take_render(config: CrawlConfig, value: Any, stored: Mapping[str, Any]) -> CrawlConfig:
    return replace(config, render=render_here(stored, config.render.browser))


def render_here(stored: Mapping[str, Any], browser: str | None = None) -> Render:
    """The stored crawl's rendering on this machine, with the first browser it has of
    ``browser``, the one the crawl was started with and Chromium on PATH; refused, naming
    what to install, when it has none."""
    from .._exceptions import ConfigError
    from ..render import find_browser

    render = dict(stored.get("render") or {})
    if render.get("mode", "never") == "never":
        return Render(**render)
    error: ConfigError | None = None
    for candidate in dict.fromkeys([browser, render.get("browser"), None]):
        try:
            here = Render(**{**render, "browser": candidate})
            find_browser(here)
        except ConfigError as exc:
            error = error or exc
        else:
            return here
    raise ResumeRefused(f"this crawl renders pages (--render {render['mode']}): {error}", path="")


def _markdown(value: tuple[bool, str]) -> str:
    markdown, scope = value
    if not markdown:
        return "no --markdown"
    return "--markdown" + (f" --markdown-scope {scope}" if scope != "main" else "")


def _take_markdown(config: CrawlConfig, value: Any, stored: Mapping[str, Any]) -> CrawlConfig:
    return replace(config, markdown=markdown_here(stored), markdown_scope=value[1])


def markdown_here(stored: Mapping[str, Any]) -> bool:
    """Whether the stored crawl makes Markdown; refused, naming the extra to install, when it
    does and this machine cannot."""
    from .._exceptions import MissingExtra
    from ..parse import require_markdown

    if not stored.get("markdown"):
        return False
    try:
        require_markdown()
    except MissingExtra as exc:
        raise ResumeRefused(f"this crawl makes Markdown (--markdown): {exc}", path="") from None
    return True


#: The stored options of a crawl's aim, one row each: a new one is one row.
AIM: tuple[Aim, ...] = (
    Aim(
        "rules",
        "them",
        lambda config: given_rules(config),
        lambda stored: Rules.from_dict(stored.get("rules") or {}),
        Rules(),
        lambda rules: rules.describe(),
        lambda config, rules, _: replace(config, rules=rules, subdomains=False),
    ),
    Aim(
        "extraction rules",
        "them",
        lambda config: [rule.to_json() for rule in config.extract],
        lambda stored: list(stored.get("extract") or []),
        [],
        _extract,
        _take_extract,
    ),
    Aim(
        "rendering",
        "it",
        lambda config: config.render.mode,
        lambda stored: (stored.get("render") or {}).get("mode", "never"),
        "never",
        lambda mode: f"--render {mode}",
        _take_render,
    ),
    Aim(  # the pages stored so far have their Markdown of this scope, or none
        "Markdown",
        "it",
        lambda config: (config.markdown, config.markdown_scope if config.markdown else "main"),
        lambda stored: (
            bool(stored.get("markdown", False)),
            (stored.get("markdown_scope") or "main") if stored.get("markdown") else "main",
        ),
        (False, "main"),
        _markdown,
        _take_markdown,
    ),
)


@dataclass(frozen=True, slots=True)
class Resumed:
    """What a run goes on with: its config, the stored aim taken in; and what it took."""

    config: CrawlConfig
    taken: tuple[tuple[str, str], ...] = ()  # (what, as flags)


def take_or_refuse(stored: Mapping[str, Any] | None, config: CrawlConfig, where: str) -> Resumed:
    """The config a run of a stored crawl (resumed or joined) goes on with; raises
    :class:`~sitecrawl._exceptions.ResumeRefused` (``path=where``) when it gives other aim
    than the crawl began with, or lacks the credentials it began with."""
    if not stored:
        return Resumed(config)
    missing = config.requests.missing(stored.get("requests"))
    if missing:
        raise ResumeRefused(
            "this crawl began with credentials that are not stored: give them again with "
            + ", ".join(missing),
            path=where,
        )
    taken: list[tuple[str, str]] = []
    for aim in AIM:
        value, given = aim.stored(stored), aim.given(config)
        if value == given:
            continue
        if given != aim.default:
            raise ResumeRefused(
                f"this crawl began with {aim.describe(value)}, not {aim.describe(given)}: run"
                f" it with the same {aim.what} (or none, to take {aim.them}), or start over with"
                " --fresh",
                path=where,
            )
        try:
            config = aim.take(config, value, stored)
        except ResumeRefused as exc:
            raise ResumeRefused(str(exc), path=where) from None
        taken.append((aim.what, aim.describe(value)))
    return Resumed(config, tuple(taken))


def origin_of(href: str) -> str:
    """``scheme://host[:port]/`` of a canonical href."""
    return href[: href.index("/", href.index("://") + 3) + 1]
