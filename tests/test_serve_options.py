"""The API's crawl options -> the CrawlConfig the driver runs (pure: no server): each option
by its config name, checked by its command-line flag's parser, the command line's defaults."""

from __future__ import annotations

from typing import Any

import pytest

from sitecrawl import CrawlConfig
from sitecrawl._cli import build_parser
from sitecrawl._cli._options import config_from_args
from sitecrawl.serve import OptionError, config_from_options
from sitecrawl.serve._options import option_names, option_schema, with_cli_defaults

URL = "https://example.com/"


def test_options_by_their_config_names() -> None:
    config = config_from_options(
        URL,
        {
            "max_pages": 20,
            "max_depth": "3",
            "timeout": 5,
            "per_host": 2,
            "delay": 0.5,
            "obey_robots": False,
            "sitemaps": False,
            "scope": "prefix",
            "include": ["/docs/"],
            "rewrite": [["/old/", "/new/"]],
            "render_timeout": 4,
            "extract": {"price": "css:.price"},
            "headers": {"X-Key": "v"},
            "auth": "me:pw",
            "keep_cookies": False,
        },
    )
    assert (config.limits.max_pages, config.limits.max_depth) == (20, 3)
    assert config.timeouts.total == 5 and config.render.timeout == 4
    assert (config.politeness.per_host, config.politeness.delay) == (2, 0.5)
    assert not config.politeness.obey_robots and not config.politeness.sitemaps
    assert config.rules.scope == "prefix" and config.rules.include == ("/docs/",)
    assert config.rules.rewrite == (("/old/", "/new/"),)
    assert [rule.name for rule in config.extract] == ["price"]
    assert config.requests.headers == (("X-Key", "v"),) and config.requests.auth == ("me", "pw")
    assert not config.requests.keep_cookies


def test_the_command_lines_defaults_as_the_command_line_gives_them() -> None:
    """A crawl through the API is paced and aimed as ``sitecrawl crawl URL``'s."""
    api = config_from_options(URL, with_cli_defaults({}))
    cli = config_from_args(build_parser().parse_args(["crawl", URL]))
    assert api == cli
    assert with_cli_defaults({"max_concurrency": 3})["max_concurrency"] == 3


@pytest.mark.parametrize(
    ("options", "option", "said"),
    [
        ({"max_pages": 0}, "max_pages", "at least 1"),
        ({"max_pages": 2.5}, "max_pages", "whole number"),
        ({"max_pages": True}, "max_pages", "not a value"),
        ({"delay": -1}, "delay", "0 or more"),
        ({"jitter": 2}, "jitter", "fraction"),
        ({"markdown_scope": "half"}, "markdown_scope", "main, full"),
        ({"rewrite": [["only one"]]}, "rewrite", "pairs"),
        ({"include": ["("]}, "include", ""),
        ({"auth": "nocolon"}, "auth", "USER:PASSWORD"),
        ({"headers": {"Bad Name": "v"}}, "headers", "header"),
        ({"proxy": "socks5://x"}, "proxy", "proxy"),
        ({"browser": "/bin/sh"}, "browser", "not a crawl option"),
        ({"extract_file": "/etc/passwd"}, "extract_file", "not a crawl option"),
        ({"subdomains": True}, "subdomains", "not a crawl option"),
    ],
)
def test_a_bad_option_names_itself(options: dict[str, Any], option: str, said: str) -> None:
    with pytest.raises(OptionError) as caught:
        config_from_options(URL, options)
    assert caught.value.option == option and said in str(caught.value)


def test_every_option_has_a_schema_with_its_help() -> None:
    schema = option_schema()
    assert sorted(schema) == option_names()
    assert all(entry.get("description") for entry in schema.values())
    assert schema["scope"]["enum"] == ["site", "prefix", "subdomains", "domain"]
    assert isinstance(config_from_options(URL, {}), CrawlConfig)
