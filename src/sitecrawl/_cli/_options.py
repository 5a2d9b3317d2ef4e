"""The crawl options, derived from the config's fields (:mod:`sitecrawl._settings`): each
setting's flag, help and parser are declared once, on its field; here they become argparse
options, and the parsed arguments become a :class:`~sitecrawl.CrawlConfig`.

A field whose flags are ``custom`` is converted by the one function :data:`_CUSTOM` names for
it: the requests (they read the environment and may ask for a password) and the extraction
rules (they read a file). Everything else is generic.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._config import CrawlConfig
from .._settings import Flag, SettingField, settings_of
from ._common import UsageError
from ._requests import requests_from_args

if TYPE_CHECKING:
    from ..control import Rules
    from ..parse import Rule

#: Which command-line value means "not given": every crawl option defaults to it, so that a
#: given option is told apart from the default (and two options of one field can disagree).
_NOT_GIVEN = None


def _custom() -> dict[tuple[str, ...], Callable[[argparse.Namespace], Any]]:
    """The fields (or whole sections) whose options a command-line function converts."""
    return {("requests",): requests_from_args, ("extract",): extract_from_args}


def add_crawl_options(parser: argparse.ArgumentParser) -> None:
    """Every crawl setting's options (any command that crawls takes them)."""
    add_setting_options(parser)


def add_setting_options(
    parser: argparse.ArgumentParser,
    *,
    only: Collection[str] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> None:
    """The options of the crawl settings (``only``: those whose argparse names are listed),
    in their ``--help`` sections. ``defaults`` shows another default in a command's help
    (the worker's one process); :func:`config_from_args` is told the same."""
    groups: dict[str, argparse._ActionsContainer] = {"": parser}
    for item in settings_of(CrawlConfig):
        for flag in item.setting.flags:
            if only is not None and flag.dest not in only:
                continue
            title = item.section or ""
            if title not in groups:
                groups[title] = parser.add_argument_group(title)
            shown = (defaults or {}).get(flag.dest, _default(item, flag))
            _add(groups[title], flag, shown)


def _default(item: SettingField, flag: Flag) -> Any:
    """The default the command line uses: the flag's own (said why), else the field's."""
    return flag.cli_default if flag.has_cli_default else item.default


def _add(group: argparse._ActionsContainer, flag: Flag, shown: Any) -> None:
    if isinstance(shown, float) and shown.is_integer():
        shown = int(shown)  # "default 30", not "default 30.0"
    help_text = flag.help.replace("%", "%%").replace("%%(default)s", str(shown))
    options: dict[str, Any] = {"help": help_text, "default": _NOT_GIVEN}
    if flag.kind in ("true", "false"):
        options["action"] = "store_true"
    elif flag.kind == "const":
        options.update(action="store_const", const=flag.const)
    else:
        options.update(type=flag.parse, metavar=flag.metavar, choices=flag.choices)
        if flag.kind == "append":
            options["action"] = "append"
        elif flag.kind == "pairs":
            options.update(action="append", nargs=2)
        elif flag.kind == "optional":
            options.update(nargs="?", const=flag.const)
    group.add_argument(*flag.options, **options)


def given(args: argparse.Namespace, item: SettingField) -> tuple[bool, Any]:
    """Whether the command line gave the setting, and its value for the config. Two options
    of one field that disagree (``--scope prefix --subdomains``) are a :class:`UsageError`."""
    found: dict[Any, str] = {}
    for flag in item.setting.flags:
        raw = getattr(args, flag.dest, _NOT_GIVEN)
        if raw is _NOT_GIVEN:
            continue
        value = _value(flag, raw)
        found.setdefault(_hashable(value), flag.options[-1])
        if len(found) > 1:
            first, second = found.values()
            raise UsageError(f"{first} and {second} disagree: give one of them")
        result = value
    if found:
        return True, result
    return False, None


def _value(flag: Flag, raw: Any) -> Any:
    if flag.kind == "true":
        return True
    if flag.kind == "false":
        return False
    if flag.kind == "const":
        return flag.const
    if flag.kind == "append":
        raw = tuple(raw)
    elif flag.kind == "pairs":
        raw = tuple((first, second) for first, second in raw)
    return flag.to_config(raw) if flag.to_config is not None else raw


def _hashable(value: Any) -> Any:
    return repr(value)


def section_from_args(args: argparse.Namespace, cls: type, path: tuple[str, ...] = ()) -> Any:
    """A config section (``cls`` at ``path``) built from the options."""
    return cls(**_values(args, cls, path, {}))


def _values(
    args: argparse.Namespace, cls: type, path: tuple[str, ...], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """The keyword arguments of ``cls`` the options give (the rest keep their defaults)."""
    custom = _custom()
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        where = (*path, field.name)
        if where in custom:
            values[field.name] = custom[where](args)
        elif "section" in field.metadata:
            nested: type = field.default_factory  # type: ignore[assignment]
            values[field.name] = nested(**_values(args, nested, where, defaults))
        else:
            item = SettingField(where, field, field.metadata["setting"], None)
            flags = item.setting.flags
            if not flags or any(flag.custom for flag in flags):
                continue
            found, value = given(args, item)
            if found:
                values[field.name] = value
            elif flags[0].dest in defaults:
                values[field.name] = defaults[flags[0].dest]
            elif flags[0].has_cli_default:
                values[field.name] = flags[0].cli_default
    return values


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The :class:`~sitecrawl.control.Rules` of the options; a bad one is a
    :class:`UsageError`."""
    from .._exceptions import ConfigError
    from ..control import Rules

    try:
        rules: Rules = section_from_args(args, Rules, ("rules",))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return rules


def config_from_args(
    args: argparse.Namespace, *, defaults: Mapping[str, Any] | None = None
) -> CrawlConfig:
    """The options of :func:`add_crawl_options` (and ``args.url`` / ``args.urls``) as a frozen
    config; a bad value is a :class:`UsageError`. Rendering asked for without Playwright or a
    browser is one too, naming what to install, before any crawling; so is Markdown without
    the markdown extra."""
    from .._exceptions import ConfigError
    from ..parse import require_markdown
    from ..render import find_browser

    starts = tuple(getattr(args, "urls", None) or [args.url])
    try:
        config = CrawlConfig(
            base_url=starts[0],
            start_urls=starts if len(starts) > 1 else (),
            **_values(args, CrawlConfig, (), defaults or {}),
        )
        if config.render.mode != "never":
            find_browser(config.render)
        if config.markdown:  # MissingExtra (a ConfigError) names the install command
            require_markdown()
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    return config


def extract_from_args(args: argparse.Namespace) -> tuple[Rule, ...]:
    """The custom extraction rules of the options; a bad one is a :class:`UsageError`."""
    from .._exceptions import ConfigError
    from ..parse import Extraction, load_rules_file, parse_specs

    given = getattr(args, "extract", None) or []
    path = getattr(args, "extract_file", None)
    if not given and not path:
        return ()
    try:
        specs: dict[str, Any] = load_rules_file(path) if path else {}
        for name, spec in parse_specs(given).items():
            if name in specs:
                raise ConfigError(f"extract rule {name!r} is given twice")
            specs[name] = spec
        return Extraction.from_specs(specs).rules
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
