"""What a crawl keeps of its aim between runs and workers (pure): the rules (and the names of
the credentials) stored with a durable frontier (SQLite meta, Redis config), and whether a new
run may go on with them.

A resumed or joined crawl obeys the rules it began with: a run that gives none takes the
stored ones; a run that gives other rules is refused, since the queue and the links seen so
far were decided by the stored ones.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from typing import Any

from .._config import CrawlConfig
from .._exceptions import StateError
from ._rules import Rules


def given_rules(config: CrawlConfig) -> Rules:
    """The config's rules, ``subdomains=True`` folded in as their scope."""
    if config.subdomains and config.rules.scope is None:
        return replace(config.rules, scope="subdomains")
    return config.rules


def stored_options(config: CrawlConfig) -> dict[str, Any]:
    """What a durable frontier stores with a new crawl so that a resume obeys the same aim, and
    which credentials it was given (never their values: a resume is given them again)."""
    options: dict[str, Any] = {
        "rules": given_rules(config).to_dict(),
        "requests": config.requests.shape(),
    }
    if config.extract:  # a resume without --extract runs the rules it began with
        options["extract"] = [rule.to_json() for rule in config.extract]
    if config.render.mode != "never":  # and one without --render renders as it began to
        render = dataclasses.asdict(config.render)
        del render["browser"]  # this machine's
        options["render"] = render
    return options


def render_to_take(options: dict[str, Any] | None, config: CrawlConfig, where: str) -> CrawlConfig:
    """The config a resumed crawl runs with: a run that renders nothing (``--render never``)
    of a crawl that began rendering takes its rendering, with this machine's browser; a
    :class:`StateError` names what to install when it has none."""
    stored = (options or {}).get("render")
    if not stored or config.render.mode != "never":
        return config
    from .._config import Render
    from .._exceptions import ConfigError

    render = Render(**stored, browser=config.render.browser)
    try:
        from ..render._browser import find_browser

        find_browser(render)
    except ConfigError as exc:
        message = f"this crawl renders pages (--render {render.mode}): {exc}"
        raise StateError(message, path=where) from None
    return replace(config, render=render)


def check_credentials(options: dict[str, Any] | None, config: CrawlConfig, where: str) -> None:
    """Raise :class:`StateError` naming the credentials the crawl began with (only their
    names are stored) that this run was not given again."""
    missing = config.requests.missing((options or {}).get("requests"))
    if missing:
        raise StateError(
            "this crawl began with credentials that are not stored: give them again with "
            + ", ".join(missing),
            path=where,
        )


def rules_to_take(options: dict[str, Any] | None, config: CrawlConfig, where: str) -> Rules | None:
    """The stored rules this run must take instead of its own, or None (none stored, or the
    same); raises :class:`StateError` when the run gives other rules."""
    stored = (options or {}).get("rules")
    if stored is None:
        return None
    rules = Rules.from_dict(stored)
    given = given_rules(config)
    if rules == given:
        return None
    if given != Rules():
        raise StateError(
            f"this crawl began with {rules.describe()}, not {given.describe()}: resume it"
            " with the same rules (or none, to reuse them), or start over with --fresh",
            path=where,
        )
    return rules


def origin_of(href: str) -> str:
    """``scheme://host[:port]/`` of a canonical href."""
    return href[: href.index("/", href.index("://") + 3) + 1]
