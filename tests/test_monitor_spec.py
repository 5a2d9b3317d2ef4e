"""The pure parts of monitors: schedules, the options a monitor takes, the webhook's body
and its caps, its Slack shape and its signature (no server)."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime

import pytest

from sitecrawl import ConfigError
from sitecrawl._diff import Change
from sitecrawl.serve._monitor_payload import (
    MAX_CHANGES,
    MAX_VALUE,
    SLACK_CHANGES,
    encode,
    payload,
    signature,
    slack_message,
)
from sitecrawl.serve._monitor_spec import (
    MonitorSpec,
    config_from_options,
    next_due,
    parse_every,
    parse_monitor,
)


def test_every_takes_seconds_and_durations() -> None:
    assert [parse_every(v) for v in (2, 1.5, "30s", "15m", "1h", "1d", " 2 ")] == [
        2.0,
        1.5,
        30.0,
        900.0,
        3600.0,
        86400.0,
        2.0,
    ]
    for bad in ("soon", "1w", -1, 0.5, True, None):
        with pytest.raises(ConfigError, match="every"):
            parse_every(bad)


def test_next_due_from_the_last_run() -> None:
    every = MonitorSpec(url="http://x/", every=60.0)
    assert next_due(every, None, 1000.0) == 1000.0  # at once
    assert next_due(every, 5000.0, 1000.0) == 5060.0
    cron = MonitorSpec(url="http://x/", cron="0 6 * * *")
    created = datetime(2026, 1, 1, 7, 0, tzinfo=UTC).timestamp()
    assert next_due(cron, None, created) == datetime(2026, 1, 2, 6, 0, tzinfo=UTC).timestamp()
    ran = datetime(2026, 1, 2, 6, 0, 3, tzinfo=UTC).timestamp()
    assert next_due(cron, ran, created) == datetime(2026, 1, 3, 6, 0, tzinfo=UTC).timestamp()


def test_options_by_their_config_names() -> None:
    config = config_from_options(
        "http://127.0.0.1:1/",
        {
            "max_pages": 5,
            "max_depth": 2,
            "include": ["/blog/"],
            "scope": "site",
            "timeout": 7,
            "render_timeout": 3,
            "delay": 0.5,
            "headers": {"X-Key": "v"},
            "auth": "user:pw",
            "extract": {"price": "css:.price"},
        },
    )
    assert (config.limits.max_pages, config.limits.max_depth) == (5, 2)
    assert config.rules.include == ("/blog/",) and config.rules.scope == "site"
    assert (config.timeouts.total, config.render.timeout) == (7, 3)
    assert config.politeness.delay == 0.5 and config.requests.auth == ("user", "pw")
    assert config.requests.headers == (("X-Key", "v"),)
    assert [rule.name for rule in config.extract] == ["price"]
    for name, value in {
        "nope": 1,
        "max_pages": "many",
        "scope": "galaxy",
        "cookie_file": "/etc/passwd",
        "proxy": "http://p/",
        "processes": 4,
        "max_concurrency": 0,
        "delay": True,
    }.items():
        with pytest.raises(ConfigError, match=name):
            config_from_options("http://127.0.0.1:1/", {name: value})


def test_a_monitor_keeps_its_secrets_apart() -> None:
    spec, secrets = parse_monitor(
        {
            "url": "http://127.0.0.1:1/",
            "cron": "*/5 * * * *",
            "webhook": "https://hooks.example/T/B/X",
            "secret": "s",
            "cookies": {"session": "abc"},
            "max_pages": 3,
        }
    )
    assert spec.options == {"max_pages": 3} and spec.cron == "*/5 * * * *"
    assert secrets.webhook == "https://hooks.example/T/B/X" and secrets.secret == "s"
    assert secrets.credentials == {"cookies": {"session": "abc"}}
    assert "abc" not in json.dumps(spec.to_dict())
    for body, word in (
        ({"url": "http://x/"}, "every"),
        ({"url": "http://x/", "every": 5, "cron": "* * * * *"}, "every"),
        ({"url": "http://x/", "every": 5, "webhook": "ftp://x"}, "webhook"),
        ({"url": "http://x/", "every": 5, "format": "xml"}, "format"),
        ({"url": "http://x/", "every": 5, "notify": "always"}, "notify"),
        ([], "object"),
    ):
        with pytest.raises(ConfigError, match=word):
            parse_monitor(body)


def _changes(n: int) -> list[Change]:
    return [Change(f"http://x/{i}", "title", "title", "a" * 1000, str(i)) for i in range(n)]


def test_the_body_is_capped_and_links_the_whole_diff() -> None:
    body = payload(
        monitor="m1",
        url="http://x/",
        crawl=3,
        previous_crawl=2,
        pages=10,
        errors=1,
        changes=_changes(MAX_CHANGES + 7),
        fail_on=("status",),
        diff_url="http://srv/api/monitors/m1/diff?crawl=3",
    )
    assert len(body["changes"]) == MAX_CHANGES and body["truncated"]
    assert body["changes_total"] == MAX_CHANGES + 7 and body["failing"] == []
    assert body["summary"] == {
        "pages": 10,
        "errors": 1,
        "changes": MAX_CHANGES + 7,
        "counts": {"title": MAX_CHANGES + 7},
    }
    assert len(body["changes"][0]["old"]) == MAX_VALUE + 1  # cut, with an ellipsis
    slack = slack_message(body)
    listing = slack["blocks"][1]["text"]["text"]
    assert listing.count("\n") == SLACK_CHANGES and listing.endswith(
        f"and {MAX_CHANGES + 7 - SLACK_CHANGES} more"
    )
    assert "the whole diff" in slack["blocks"][2]["elements"][0]["text"]
    raw = encode(body)
    expected = hmac.new(b"k", raw, hashlib.sha256).hexdigest()
    assert signature(raw, "k") == f"sha256={expected}"
    assert signature(raw + b" ", "k") != signature(raw, "k")
