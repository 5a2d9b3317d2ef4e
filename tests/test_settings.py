"""Each setting declared once: the config's fields carry their flags, and the command line's
options, its args-to-config mapping and the library's keywords are derived from them."""

from __future__ import annotations

import argparse
import dataclasses
import inspect

import pytest

from sitecrawl import AsyncCrawler, CrawlConfig, crawl_site_async
from sitecrawl._cli import build_parser, main
from sitecrawl._cli._options import config_from_args
from sitecrawl._course import KEYWORDS
from sitecrawl._crawl_site import CrawlOptions
from sitecrawl._settings import Flag, FromArgs, LibraryOnly, settings_of


def crawl_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    crawl: argparse.ArgumentParser = sub.choices["crawl"]
    return crawl


def test_every_field_is_a_setting_with_a_flag_or_a_reason() -> None:
    seen = 0
    for item in settings_of(CrawlConfig):  # raises on a field that is neither
        seen += 1
        mark = item.setting.mark
        if isinstance(mark, LibraryOnly | FromArgs):
            assert len(mark.why if isinstance(mark, LibraryOnly) else mark.where) > 10
        else:
            assert item.setting.flags, item.path
    assert seen > 40


def test_a_field_without_a_mark_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Bad:
        loose: int = 3

    with pytest.raises(TypeError, match="neither a setting nor a section"):
        list(settings_of(Bad))


def test_a_cli_default_says_why() -> None:
    with pytest.raises(TypeError, match="says why"):
        Flag(options=("--x",), help="x", cli_default=3)
    differing = [
        (item.path, flag)
        for item in settings_of(CrawlConfig)
        for flag in item.setting.flags
        if flag.has_cli_default
    ]
    assert {path for path, _ in differing} == {("limits", "max_concurrency"), ("processes",)}
    assert all(len(flag.why) > 40 for _, flag in differing)


def test_the_crawl_command_has_exactly_the_flags_of_the_settings() -> None:
    declared = {
        option
        for item in settings_of(CrawlConfig)
        for f in item.setting.flags
        for option in f.options
    }
    command_only = {
        "-h", "--help", "--list", "--follow", "-o", "--output", "--state", "--no-state",
        "--fresh", "--keep", "--diff", "--report", "-q", "--quiet", "--redis", "--crawl-id",
        "--lease-ttl", "--redis-timeout", "-v", "--verbose", "--csv-markdown",
        "--warc-max-size", "--archive-cookies",  # the web archive outputs' (-o .warc.gz)
    }  # fmt: skip
    options = {option for action in crawl_parser()._actions for option in action.option_strings}
    assert options - command_only == declared


def test_no_options_give_the_library_defaults_but_where_the_cli_differs_on_purpose() -> None:
    args = crawl_parser().parse_args(["http://127.0.0.1:9/"])
    args.url = args.urls[0]
    config = config_from_args(args)
    library = CrawlConfig(base_url="http://127.0.0.1:9/")
    assert config.limits.max_concurrency == 16
    assert config.processes >= 1
    assert dataclasses.replace(
        config, limits=library.limits, processes=library.processes
    ) == dataclasses.replace(library, start_urls=config.start_urls)


def test_options_reach_their_fields() -> None:
    argv = [
        "http://127.0.0.1:9/", "--per-host", "3", "--no-sitemaps", "--ignore-robots",
        "--max-pattern-pages", "0", "--rewrite", "a", "b", "--strip-params", "utm_*",
        "--include", "x", "--include", "y", "--render-timeout", "2", "--timeout", "7",
    ]  # fmt: skip
    args = crawl_parser().parse_args(argv)
    args.url = args.urls[0]
    config = config_from_args(args)
    assert config.politeness.per_host == 3
    assert config.politeness.sitemaps is False and config.politeness.obey_robots is False
    assert config.limits.max_pattern_pages is None
    assert config.rules.rewrite == (("a", "b"),)
    assert config.rules.strip_params == ("utm_*",)
    assert config.rules.include == ("x", "y")
    assert config.render.timeout == 2.0 and config.timeouts.total == 7.0


def test_help_shows_the_default_the_command_line_uses() -> None:
    text = crawl_parser().format_help()
    assert "requests in flight at most (default 16)" in text
    assert "cap on a robots.txt Crawl-delay (default 30)" in text


@pytest.mark.parametrize(
    "argv", [["--scope", "prefix", "--subdomains"], ["--subdomains", "--scope", "site"]]
)
def test_two_options_of_one_setting_that_disagree_are_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crawl", "http://127.0.0.1:9/", "--no-state", *argv]) == 2
    err = capsys.readouterr().err
    assert "disagree" in err and err.count("\n") == 1


def test_the_same_value_twice_is_not_a_disagreement() -> None:
    args = crawl_parser().parse_args(
        ["http://127.0.0.1:9/", "--scope", "subdomains", "--subdomains"]
    )
    args.url = args.urls[0]
    assert config_from_args(args).rules.scope == "subdomains"


@pytest.mark.parametrize("function", [AsyncCrawler.__init__, crawl_site_async])
def test_the_library_keywords_are_the_settings_keywords(function: object) -> None:
    parameters = dict(inspect.signature(function).parameters)  # type: ignore[arg-type]
    if "options" in parameters:  # **options: Unpack[CrawlOptions]
        del parameters["options"]
        parameters.update(
            (name, inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None))
            for name in CrawlOptions.__annotations__
        )
    library = CrawlConfig(base_url="http://127.0.0.1:9/")
    for keyword, path in KEYWORDS.items():
        assert keyword in parameters, keyword
        default = library
        for name in path:
            default = getattr(default, name)
        assert parameters[keyword].default in (None, default), keyword
    not_settings = {
        "self", "base_url", "config", "frontier", "on_page", "on_error", "keep_pages", "state",
        "throttle", "recorder",
    }  # fmt: skip
    assert set(parameters) - not_settings == set(KEYWORDS)
