"""A crawl's options as an API caller gives them (JSON, by their config names) -> the
:class:`~sitecrawl.CrawlConfig` the driver runs. Pure: no I/O.

Every option is a setting declared once on the config (:func:`sitecrawl._settings.settings_of`):
its name is the field's (``max_pages``, ``per_host``, ``include``, ``obey_robots``; a library
keyword where there is one, ``timeout``; ``render``, ``render_tabs`` for rendering), its value
is checked by the same parser as its command-line flag (``count(1)``, ``seconds``, choices),
and an option the API does not know, or a bad value, is an :class:`OptionError` naming it.
What the command line defaults differently on purpose (``-c 16``) it defaults the same way
here: a crawl started through the API is aimed and paced as the command line's.

Credentials (:data:`SECRETS`: ``headers``, ``cookies``, ``auth``, ``proxy``) are options too,
but they are kept apart (:func:`split_secrets`): never stored by the server, never answered;
a state file keeps only their names (:meth:`~sitecrawl.Requests.shape`), as for the command
line. Options that would read the server's own files or run its programs (``cookie_file``,
``extract_file``, ``browser``) are not taken.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from .._config import CrawlConfig
from .._config_requests import Requests
from .._exceptions import ConfigError, InvalidURL
from .._settings import Flag, SettingField, settings_of

#: Options that are credentials: kept in memory only, never stored by the server nor answered.
SECRETS = ("headers", "cookies", "auth", "proxy")
#: Options of the requests section that the API takes besides the secrets.
_REQUEST_OPTIONS = ("keep_cookies",)


class OptionError(ConfigError):
    """A crawl option the API cannot use: ``option`` names it."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"option {option!r}: {message}")
        self.option = option


#: Settings an API caller may not give: they name a program or file on the server.
REFUSED = frozenset({("render", "browser")})


def api_name(item: SettingField) -> str:
    """A setting's name in the API: its library keyword (``timeout``), else its field's name;
    in the rendering section, ``render`` (the mode) and ``render_<field>``."""
    if item.setting.keyword:
        return item.setting.keyword
    if item.path[0] == "render":
        return "render" if item.path[-1] == "mode" else f"render_{item.path[-1]}"
    return item.path[-1]


def _settings() -> dict[str, SettingField]:
    """The options the API takes: every setting with a command-line flag that the generic
    parsers convert, by :func:`api_name`."""
    found: dict[str, SettingField] = {}
    for item in settings_of(CrawlConfig):
        flags = item.setting.flags
        if not flags or any(flag.custom for flag in flags) or item.path in REFUSED:
            continue
        name = api_name(item)
        if name in found:
            raise TypeError(f"two settings are named {name} in the API")
        found[name] = item
    return found


SETTINGS: dict[str, SettingField] = _settings()


def option_names() -> list[str]:
    """Every option a crawl takes through the API (the OpenAPI document lists them)."""
    return sorted([*SETTINGS, *SECRETS, *_REQUEST_OPTIONS, "extract"])


def option_schema() -> dict[str, Any]:
    """The JSON Schema of each option (for the OpenAPI document), with its help text."""
    schema: dict[str, Any] = {}
    for name, item in SETTINGS.items():
        flag = item.setting.flags[0]
        schema[name] = {**_json_type(flag), "description": _help(flag, item)}
    schema["headers"] = {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "headers to send (a credential: never stored nor answered)",
    }
    schema["cookies"] = {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "cookies to send (a credential: never stored nor answered)",
    }
    schema["auth"] = {
        "type": "string",
        "description": "HTTP Basic auth, USER:PASSWORD (a credential: never stored nor answered)",
    }
    schema["proxy"] = {"type": "string", "description": "an http(s) proxy URL (never answered)"}
    schema["keep_cookies"] = {"type": "boolean", "description": "keep the cookies the site sets"}
    schema["extract"] = {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "description": "extraction rules, NAME: SPEC (css:, xpath:, regex:, jsonld:)",
    }
    return schema


def _json_type(flag: Flag) -> dict[str, Any]:
    if flag.kind in ("true", "false", "const"):
        return {"type": "boolean"} if flag.kind != "const" else {"type": "string"}
    if flag.kind == "append":
        return {"type": "array", "items": {"type": "string"}}
    if flag.kind == "pairs":
        return {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
    if flag.choices:
        return {"type": "string", "enum": list(flag.choices)}
    name = getattr(flag.parse, "__name__", "")
    if name.startswith("count"):
        return {"type": "integer"}
    if flag.parse is not None:
        return {"type": "number"}
    return {"type": "string"}


def _help(flag: Flag, item: SettingField) -> str:
    shown = flag.cli_default if flag.has_cli_default else item.default
    return flag.help.replace("%(default)s", str(shown))


def split_secrets(options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(options, secrets)``: the credentials taken out of ``options``."""
    plain = {name: value for name, value in options.items() if name not in SECRETS}
    secrets = {name: value for name, value in options.items() if name in SECRETS}
    return plain, secrets


def secret_names(secrets: Mapping[str, Any]) -> list[str]:
    """What a crawl's credentials are, without their values: ``header authorization``,
    ``cookie session``, ``auth``, ``proxy``."""
    names: list[str] = []
    names += [f"header {name.lower()}" for name in secrets.get("headers") or {}]
    names += [f"cookie {name}" for name in secrets.get("cookies") or {}]
    names += [name for name in ("auth", "proxy") if secrets.get(name)]
    return names


def config_from_options(url: Any, options: Mapping[str, Any]) -> CrawlConfig:
    """The config of a crawl of ``url`` with ``options`` (JSON values by config name, the
    credentials among them); :class:`OptionError` names the first bad option."""
    if not isinstance(url, str) or not url:
        raise OptionError("url", "give the URL to crawl as a string")
    sections: dict[str, dict[str, Any]] = {}
    for name, raw in options.items():
        if name in SECRETS or name in _REQUEST_OPTIONS or name == "extract":
            continue
        item = SETTINGS.get(name)
        if item is None:
            raise OptionError(name, "not a crawl option (see /openapi.json)")
        if raw is None:
            continue
        *where, field = item.path
        sections.setdefault(".".join(where), {})[field] = _value(name, item, raw)
    top = sections.pop("", {})
    for path in sections:
        if "." in path:  # every section is one level deep today
            raise OptionError(path, "nested sections are not supported")
    nested: dict[str, Any] = {}
    defaults = CrawlConfig(base_url="http://localhost/")
    for path, values in sections.items():
        cls = type(getattr(defaults, path))
        nested[path] = _build(cls, values)
    nested["requests"] = _requests(options)
    if options.get("extract"):
        top["extract"] = _extract(options["extract"])
    try:
        return CrawlConfig(base_url=url, **nested, **top)
    except InvalidURL as exc:
        raise OptionError("url", str(exc)) from None
    except ConfigError as exc:
        names = [name for name in options if name in str(exc)] or ["url"]
        raise OptionError(names[0], str(exc)) from None


def _build(cls: type, values: dict[str, Any]) -> Any:
    """A config section from ``values``; a bad combination names the first of them."""
    try:
        return cls(**values)
    except ConfigError as exc:
        names = [name for name in values if name in str(exc)] or list(values)
        raise OptionError(names[0], str(exc)) from None


def _value(name: str, item: SettingField, raw: Any) -> Any:
    """One option's JSON value checked and converted as its flag's text would be."""
    flags = item.setting.flags
    flag = next((f for f in flags if f.kind not in ("true", "false", "const")), flags[0])
    if flag.kind in ("true", "false", "const"):
        if not isinstance(raw, bool):
            raise OptionError(name, f"true or false, not {raw!r}")
        return raw
    if flag.kind == "append":
        if not isinstance(raw, list):
            raise OptionError(name, "a list")
        value: Any = tuple(_parsed(name, flag, text) for text in raw)
    elif flag.kind == "pairs":
        if not isinstance(raw, list) or not all(
            isinstance(pair, list) and len(pair) == 2 for pair in raw
        ):
            raise OptionError(name, "a list of [first, second] pairs")
        value = tuple((_text(name, first), _text(name, second)) for first, second in raw)
    else:
        value = _parsed(name, flag, raw)
    return flag.to_config(value) if flag.to_config is not None else value


def _text(name: str, raw: Any) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise OptionError(name, f"not a value: {raw!r}")
    return str(raw)


def _parsed(name: str, flag: Flag, raw: Any) -> Any:
    text = _text(name, raw)
    try:
        value = flag.parse(text) if flag.parse is not None else text
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise OptionError(name, str(exc)) from None
    if flag.choices and value not in flag.choices:
        raise OptionError(name, f"one of {', '.join(flag.choices)}, not {value!r}")
    return value


def _pairs(name: str, raw: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise OptionError(name, "an object of NAME: VALUE strings")
    return tuple((str(key), value) for key, value in raw.items())


def _requests(options: Mapping[str, Any]) -> Requests:
    values: dict[str, Any] = {}
    if options.get("headers") is not None:
        values["headers"] = _pairs("headers", options["headers"])
    if options.get("cookies") is not None:
        values["cookies"] = _pairs("cookies", options["cookies"])
    if (auth := options.get("auth")) is not None:
        if not isinstance(auth, str) or ":" not in auth:
            raise OptionError("auth", "USER:PASSWORD")
        user, _, password = auth.partition(":")
        values["auth"] = (user, password)
    if (proxy := options.get("proxy")) is not None:
        values["proxy"] = _text("proxy", proxy)
    if (keep := options.get("keep_cookies")) is not None:
        if not isinstance(keep, bool):
            raise OptionError("keep_cookies", f"true or false, not {keep!r}")
        values["keep_cookies"] = keep
    return _build_requests(values) if values else Requests()


def _build_requests(values: dict[str, Any]) -> Requests:
    try:
        return Requests(**values)
    except ConfigError as exc:
        text = str(exc).lower()
        found = [name for name in values if name.rstrip("s") in text] or list(values)
        raise OptionError(found[0], str(exc)) from None


def _extract(raw: Any) -> tuple[Any, ...]:
    from ..parse import Extraction

    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise OptionError("extract", "an object of NAME: SPEC strings")
    try:
        return Extraction.from_specs(dict(raw)).rules
    except ConfigError as exc:
        raise OptionError("extract", str(exc)) from None


def cli_defaults() -> dict[str, Any]:
    """The options whose command-line default differs from the library's, at the command
    line's value (a crawl through the API is paced as the command line's)."""
    found: dict[str, Any] = {}
    for name, item in SETTINGS.items():
        flag = item.setting.flags[0]
        if flag.has_cli_default:
            found[name] = flag.cli_default
    return found


def with_cli_defaults(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the command line's defaults for those not given."""
    return {**cli_defaults(), **{k: v for k, v in options.items() if v is not None}}
