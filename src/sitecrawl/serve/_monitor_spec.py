"""A monitor as the API is given it, checked (pure, no I/O): :func:`parse_monitor` turns the
JSON body of ``POST /api/monitors`` into a :class:`MonitorSpec` (what may be shown) and its
:class:`Secrets` (what is never shown: the webhook URL, its signing secret, the crawl's
headers, cookies and HTTP auth); :func:`config_from_options` turns crawl options named as the
config names them into the :class:`~sitecrawl.CrawlConfig` a run crawls with;
:func:`next_due` says when a monitor runs next (``every`` or ``cron``).

A crawl option is named and read as ``POST /api/crawls`` reads it (its library keyword, such
as ``timeout``, else its setting's name: ``max_pages``, ``include``, ``render_timeout``;
:mod:`._options`). Every mistake is a :class:`~sitecrawl.ConfigError` naming the option.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from .._config import CrawlConfig
from .._diff import DEFAULT_FAIL_ON, KINDS
from .._exceptions import ConfigError, MissingExtra
from ._options import config_from_options as read_options
from ._options import with_cli_defaults

#: Options a caller of the API may not give: where a crawl starts is ``url``; files and
#: proxies of the server's machine are the server's.
REFUSED = frozenset(
    {
        "base_url",
        "start_urls",
        "cookie_file",
        "proxy",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "browser",
        "processes",
    }
)
#: The credentials among the options: kept encrypted with the monitor, never shown.
CREDENTIALS = frozenset({"headers", "cookies", "auth"})
#: ``every`` at least this many seconds (tests use seconds; a site deserves more).
MIN_EVERY = 1.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_EVERY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
Format = Literal["json", "slack"]
Notify = Literal["changes", "fail_on"]


def config_from_options(url: str, options: Mapping[str, Any]) -> CrawlConfig:
    """The config of a crawl of ``url`` with ``options``: the server's own reading of crawl
    options (:func:`~sitecrawl.serve.config_from_options`, the command line's defaults for
    those not given: one reading for crawls and monitors), after refusing what a monitor
    may not be given (:data:`REFUSED`). Raises :class:`~sitecrawl.ConfigError` naming the
    option."""
    for name in options:
        if name in REFUSED:
            raise ConfigError(f"option {name!r}: not a crawl option a monitor takes")
    return read_options(url, with_cli_defaults(options))


def parse_every(value: Any) -> float:
    """``every``: seconds (a number), or ``"30s"``, ``"15m"``, ``"1h"``, ``"1d"``."""
    if isinstance(value, bool):
        raise ConfigError("every: a number of seconds or a duration like '15m'")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (match := _EVERY.match(value)):
        seconds = float(match[1]) * _UNITS[match[2] or "s"]
    else:
        raise ConfigError(f"every: {value!r} is not a duration ('30s', '15m', '1h', '1d')")
    if seconds < MIN_EVERY:
        raise ConfigError(f"every: at least {MIN_EVERY:g} second")
    return seconds


def check_cron(expression: Any) -> str:
    try:
        from croniter import croniter  # type: ignore[import-untyped]
    except ImportError:
        raise MissingExtra(
            "cron needs croniter: pip install 'sitecrawl[serve]'", extra="serve"
        ) from None

    if not isinstance(expression, str) or not croniter.is_valid(expression):
        raise ConfigError(f"cron: {expression!r} is not a cron expression ('0 6 * * *')")
    return expression


@dataclass(frozen=True, kw_only=True, slots=True)
class Secrets:
    """What a monitor keeps encrypted and the API never returns."""

    webhook: str | None = None
    secret: str | None = None
    credentials: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"webhook": self.webhook, "secret": self.secret, "credentials": self.credentials}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Secrets:
        return cls(
            webhook=data.get("webhook"),
            secret=data.get("secret"),
            credentials=dict(data.get("credentials") or {}),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class MonitorSpec:
    """A monitor's schedule, delivery and crawl options (no secret among them)."""

    url: str
    every: float | None = None
    cron: str | None = None
    format: Format = "json"
    notify: Notify = "changes"
    fail_on: tuple[str, ...] = DEFAULT_FAIL_ON
    options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "every": self.every,
            "cron": self.cron,
            "format": self.format,
            "notify": self.notify,
            "fail_on": list(self.fail_on),
            "options": self.options,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MonitorSpec:
        return cls(
            url=data["url"],
            every=data.get("every"),
            cron=data.get("cron"),
            format=data.get("format") or "json",
            notify=data.get("notify") or "changes",
            fail_on=tuple(data.get("fail_on") or ()),
            options=dict(data.get("options") or {}),
        )


#: The body's own keys; every other key is a crawl option.
_OWN = ("url", "every", "cron", "webhook", "secret", "format", "notify", "fail_on")


def parse_monitor(body: Any) -> tuple[MonitorSpec, Secrets]:
    """A monitor from the JSON body of ``POST /api/monitors`` (a :class:`ConfigError`
    naming what is wrong). Its crawl options are checked by building the config."""
    if not isinstance(body, Mapping):
        raise ConfigError("the body is a JSON object")
    url = body.get("url")
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise ConfigError("url: an http:// or https:// URL")
    if ("every" in body) == ("cron" in body):
        raise ConfigError("give every (seconds, '15m', '1h') or cron ('0 6 * * *'), one of them")
    every = parse_every(body["every"]) if "every" in body else None
    cron = check_cron(body["cron"]) if "cron" in body else None
    webhook = body.get("webhook")
    if webhook is not None and (
        not isinstance(webhook, str) or not webhook.lower().startswith(("http://", "https://"))
    ):
        raise ConfigError("webhook: an http:// or https:// URL")
    secret = body.get("secret")
    if secret is not None and (not isinstance(secret, str) or not secret):
        raise ConfigError("secret: a non-empty string")
    format_ = body.get("format", "json")
    if format_ not in ("json", "slack"):
        raise ConfigError("format: json or slack")
    notify = body.get("notify", "changes")
    if notify not in ("changes", "fail_on"):
        raise ConfigError("notify: changes (any change) or fail_on (only the fail_on kinds)")
    fail_on = body.get("fail_on", list(DEFAULT_FAIL_ON))
    if not isinstance(fail_on, list) or not all(isinstance(kind, str) for kind in fail_on):
        raise ConfigError("fail_on: a list of change kinds")
    unknown = [kind for kind in fail_on if kind not in KINDS]
    if unknown:
        raise ConfigError(f"fail_on: unknown kind {unknown[0]!r} (kinds: {', '.join(KINDS)})")
    options = {key: value for key, value in body.items() if key not in _OWN}
    credentials = {key: options.pop(key) for key in list(options) if key in CREDENTIALS}
    config_from_options(url, {**options, **credentials})  # every option checked now
    spec = MonitorSpec(
        url=url,
        every=every,
        cron=cron,
        format=format_,
        notify=notify,
        fail_on=tuple(fail_on),
        options=options,
    )
    return spec, Secrets(webhook=webhook, secret=secret, credentials=credentials)


def next_due(spec: MonitorSpec, last_started: float | None, created: float) -> float:
    """When the monitor runs next (a Unix time): at once when it never ran; ``every``
    seconds after its last run began; or the cron expression's next time after that (after
    its creation when it never ran: a cron monitor waits for its time)."""
    if spec.every is not None:
        return created if last_started is None else last_started + spec.every
    from croniter import croniter

    assert spec.cron is not None
    base = datetime.fromtimestamp(last_started if last_started is not None else created, UTC)
    return float(croniter(spec.cron, base).get_next(float))
