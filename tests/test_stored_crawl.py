"""The stored-crawl codec (:mod:`sitecrawl.frontier._stored`) on its own: what a worker joining
a crawl rebuilds from it. The policy over every durable backend is in the frontier contract
suite (``test_a_resumed_or_joined_crawl_takes_or_refuses_the_stored_aim``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from frontier_backends import BASE_URL
from sitecrawl import CrawlConfig, Render, Requests, Rules
from sitecrawl._exceptions import ResumeRefused
from sitecrawl.frontier import decode, encode, take_or_refuse


def test_a_config_survives_the_codec_but_its_secrets_do_not() -> None:
    config = CrawlConfig(
        base_url=BASE_URL,
        rules=Rules(exclude=("x",)),
        subdomains=True,
        requests=Requests(headers=(("X-Token", "secret"),), proxy="http://u:pw@proxy:3128"),
    )
    stored = json.loads(json.dumps(encode(config)))  # as a backend keeps it
    assert "secret" not in json.dumps(stored) and "pw@" not in json.dumps(stored)
    back = decode(stored, requests=config.requests)
    assert back.rules == Rules(scope="subdomains", exclude=("x",))
    assert back.scope_kind == config.scope_kind and back.requests == config.requests
    assert take_or_refuse(stored, back, "here").taken == ()  # a worker's config: the same


def test_a_stored_crawls_rendering_uses_a_browser_this_machine_has(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A worker on another machine: the seed's browser path is not there, Chromium on PATH
    is taken; with none at all, one line names what to install."""
    began = CrawlConfig(base_url=BASE_URL, render=Render(mode="auto", browser="/gone/chrome"))
    chromium = tmp_path / "chromium"
    chromium.write_text("#!/bin/sh\n")
    chromium.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    config = decode(encode(began))
    assert (config.render.mode, config.render.browser) == ("auto", None)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    with pytest.raises(ResumeRefused, match=r"this crawl renders pages \(--render auto\): "):
        decode(encode(began))
