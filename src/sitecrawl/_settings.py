"""Each setting declared once: a config field carries its command-line flag, help text and
parser (or says why it has none) as metadata, and everything else is derived from it.

::

    per_host: int = setting(8, flag("--per-host", parse=count(1), metavar="N",
                                    help="requests in flight per host at most"))

``_cli`` builds every crawl option and the args-to-config mapping by walking
:func:`settings_of` over :class:`~sitecrawl.CrawlConfig`; ``_course`` derives the library's
keywords (``keyword=``) and their defaults the same way. A field is marked one of three ways:

- :class:`Flag`: a command-line option (or several, for a field two options give);
- :class:`LibraryOnly`: no option, and why (a tuning knob, or the CLI decides it itself);
- :class:`FromArgs`: given by a command's own arguments (the start URLs).

Where the command line's default differs from the library's on purpose, the flag's
``cli_default`` holds it and ``why`` says why. Pure: no I/O, nothing above this module.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

#: How a flag sets its field: a parsed ``value``; ``true``/``false`` for a bool flag (``false``:
#: the flag turns a True default off, ``--no-sitemaps``); ``append`` a repeatable value into a
#: tuple; ``pairs`` a repeatable two-value option (``--rewrite REGEX REPLACEMENT``); ``const``
#: sets ``const`` (``--subdomains`` is ``--scope subdomains``); ``optional`` a value that may be
#: left out, then ``const`` (``--screenshot`` is ``--screenshot viewport``).
Kind = Literal["value", "true", "false", "append", "pairs", "const", "optional"]
_NO_DEFAULT: Any = object()


@dataclass(frozen=True, kw_only=True, slots=True)
class Flag:
    """A command-line option of a setting. ``options`` its spellings (``"-c", "--concurrency"``);
    ``help`` its help text, where ``%(default)s`` is the default the command line uses;
    ``parse`` turns the text into a value (argparse's ``type``); ``to_config`` turns the parsed
    value into the field's (``0`` -> ``None``); ``custom``: the command line converts the
    field's options itself (it reads the environment or a file: the requests, the rules)."""

    options: tuple[str, ...]
    help: str
    kind: Kind = "value"
    parse: Callable[[str], Any] | None = None
    metavar: str | tuple[str, str] | None = None
    choices: tuple[str, ...] | None = None
    const: Any = None
    to_config: Callable[[Any], Any] | None = None
    cli_default: Any = _NO_DEFAULT
    why: str = ""
    custom: bool = False

    def __post_init__(self) -> None:
        if (self.cli_default is _NO_DEFAULT) != (not self.why):
            raise TypeError(f"{self.options}: a cli_default says why it differs, and only then")

    @property
    def dest(self) -> str:
        """The argparse attribute: the first long option, as argparse names it."""
        long = next((o for o in self.options if o.startswith("--")), self.options[0])
        return long.lstrip("-").replace("-", "_")

    @property
    def has_cli_default(self) -> bool:
        return self.cli_default is not _NO_DEFAULT


def flag(*options: str, help: str, **kwargs: Any) -> Flag:
    """``Flag(options=options, help=help, ...)``, shorter to declare."""
    return Flag(options=options, help=help, **kwargs)


@dataclass(frozen=True, slots=True)
class LibraryOnly:
    """No command-line option, and why."""

    why: str


@dataclass(frozen=True, slots=True)
class FromArgs:
    """Given by each command's own arguments (which, in ``where``)."""

    where: str


Mark = Flag | tuple[Flag, ...] | LibraryOnly | FromArgs


@dataclass(frozen=True, slots=True)
class Setting:
    """What :func:`setting` stores on a field: how it is given, and its library keyword."""

    mark: Mark
    group: str | None
    keyword: str | None

    @property
    def flags(self) -> tuple[Flag, ...]:
        if isinstance(self.mark, Flag):
            return (self.mark,)
        if isinstance(self.mark, tuple):
            return self.mark
        return ()


def setting(
    default: Any = _NO_DEFAULT,
    cli: Mark | None = None,
    *,
    default_factory: Callable[[], Any] | None = None,
    group: str | None = None,
    keyword: str | None = None,
    repr: bool = True,
) -> Any:
    """A config field with its :class:`Setting` (see the module docstring). ``group``: the
    ``--help`` section of its options (else its config section's); ``keyword``: the name of
    the library keyword that sets it (``AsyncCrawler(max_depth=3)``)."""
    if cli is None:
        raise TypeError("every setting says how it is given: Flag, LibraryOnly or FromArgs")
    metadata = {"setting": Setting(cli, group, keyword)}
    if default_factory is not None:
        return field(default_factory=default_factory, metadata=metadata, repr=repr)
    if default is _NO_DEFAULT:
        return field(metadata=metadata, repr=repr)
    return field(default=default, metadata=metadata, repr=repr)


def section(title: str, *, keyword: str | None = None) -> dict[str, Any]:
    """Metadata of a nested config field: the ``--help`` section of its settings, and the
    library keyword that gives the whole section (``requests=Requests(...)``)."""
    return {"section": title, "keyword": keyword}


@dataclass(frozen=True, slots=True)
class SettingField:
    """One setting, found by :func:`settings_of`: where it is (``("limits", "max_pages")``),
    its dataclass field, and how it is given."""

    path: tuple[str, ...]
    field: dataclasses.Field[Any]
    setting: Setting
    section: str | None

    @property
    def default(self) -> Any:
        if self.field.default is not dataclasses.MISSING:
            return self.field.default
        if self.field.default_factory is not dataclasses.MISSING:
            return self.field.default_factory()
        return None


def settings_of(
    cls: type, path: tuple[str, ...] = (), title: str | None = None
) -> Iterator[SettingField]:
    """Every setting of a config dataclass, nested sections walked in field order. A field
    that is neither a setting nor a section is a :class:`TypeError`: each is declared."""
    for item in dataclasses.fields(cls):
        found = item.metadata.get("setting")
        if found is not None:
            where = title if found.group is None else found.group
            yield SettingField((*path, item.name), item, found, where)
        elif "section" in item.metadata:
            nested = item.default_factory
            if nested is dataclasses.MISSING or not isinstance(nested, type):
                raise TypeError(f"section {item.name} has no dataclass default_factory")
            yield from settings_of(nested, (*path, item.name), item.metadata["section"])
        else:
            raise TypeError(f"{cls.__name__}.{item.name} is neither a setting nor a section")


def keywords_of(cls: type, path: tuple[str, ...] = ()) -> dict[str, tuple[str, ...]]:
    """The library keywords of a config dataclass: keyword -> the path of what it sets (a
    setting, or a whole section)."""
    found: dict[str, tuple[str, ...]] = {}
    for item in dataclasses.fields(cls):
        setting_ = item.metadata.get("setting")
        if setting_ is not None and setting_.keyword:
            found[setting_.keyword] = (*path, item.name)
        elif "section" in item.metadata:
            if item.metadata.get("keyword"):
                found[item.metadata["keyword"]] = (*path, item.name)
            found.update(keywords_of(item.default_factory, (*path, item.name)))  # type: ignore[arg-type]
    return found


# Option parsers: argparse types that say what was wrong in one line.


def count(minimum: int) -> Callable[[str], int]:
    """A whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"count({minimum})"
    return parse


def _number(text: str, what: str, ok: Callable[[float], bool], rule: str) -> float:
    """``text`` as a float that passes ``ok``; else one line: not ``what``, or not ``rule``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
    if not ok(value):  # (NaN passes no rule)
        raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
    return value


def seconds(text: str) -> float:
    """A positive number of seconds."""
    return _number(text, "a number of seconds", lambda value: value > 0, "positive")


def non_negative(text: str) -> float:
    """A number, 0 or more."""
    return _number(text, "a number", lambda value: value >= 0, "0 or more")


def fraction(text: str) -> float:
    """A number between 0 and 1."""
    value = non_negative(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"must be a fraction between 0 and 1, got {text}")
    return value


def zero_is_none(value: int) -> int | None:
    """``0`` on the command line is "no limit" (None) in the config."""
    return value or None
