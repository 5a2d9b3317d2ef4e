"""The request options of every command that crawls: ``-H/--header``, ``--cookie``,
``--cookies FILE``, ``--auth USER[:PASSWORD]``, ``--no-cookies``, ``--proxy URL``, read into a
:class:`~sitecrawl.Requests`. Here, and only here, the environment is read for them: the
password from ``SITECRAWL_PASSWORD``, the proxies from ``HTTP_PROXY``/``HTTPS_PROXY``/
``NO_PROXY`` (as curl reads them) unless ``--proxy`` is given."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._common import UsageError

if TYPE_CHECKING:
    from .._config_requests import Requests

PASSWORD_ENV = "SITECRAWL_PASSWORD"


def requests_from_args(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> Requests:
    """The :class:`~sitecrawl.Requests` of the options (and the environment); a bad option is
    a :class:`UsageError`. Read once per command (a password is asked for once)."""
    cached: Requests | None = getattr(args, "requests_read", None)
    if cached is not None:
        return cached
    from .._config_requests import Requests
    from .._exceptions import ConfigError
    from ..fetch import load_cookie_file

    env = os.environ if environ is None else environ
    headers = [_split(text, ":", "-H", "'Name: value'") for text in args.header or ()]
    cookies = [_split(text, "=", "--cookie", "name=value") for text in args.cookie or ()]
    auth = None
    if args.auth is not None:
        user, colon, password = args.auth.partition(":")
        auth = (user, password if colon else _password(user, env))
    proxies: dict[str, Any] = {"proxy": args.proxy}
    if args.proxy is None:
        proxies = _env_proxies(env)
    try:
        requests = Requests(
            headers=tuple(headers),
            cookies=tuple(cookies),
            cookie_file=args.cookies,
            auth=auth,
            keep_cookies=not args.no_cookies,
            **proxies,
        )
        if args.cookies is not None:
            load_cookie_file(args.cookies)  # a bad file is said now, not at the first request
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    args.requests_read = requests
    return requests


def _split(text: str, sep: str, option: str, form: str) -> tuple[str, str]:
    name, found, value = text.partition(sep)
    if not found or not name.strip():
        raise UsageError(f"{option} takes {form}, got {text!r}")
    return name.strip(), value.strip()


def _password(user: str, env: Mapping[str, str]) -> str:
    """The password of ``--auth USER``: from the environment, else asked on a terminal; a
    crawl in CI never waits for a prompt."""
    password = env.get(PASSWORD_ENV)
    if password is not None:
        return password
    if not sys.stdin.isatty():
        raise UsageError(
            f"--auth {user} needs a password: set {PASSWORD_ENV} (or give --auth USER:PASSWORD)"
        )
    import getpass

    return getpass.getpass(f"password for {user}: ")


def _env_proxies(env: Mapping[str, str]) -> dict[str, Any]:
    """``HTTP_PROXY``, ``HTTPS_PROXY`` and ``NO_PROXY`` (any case; lower case first, as
    curl reads them)."""

    def get(name: str) -> str | None:
        return env.get(name.lower()) or env.get(name.upper()) or None

    no_proxy = get("no_proxy") or ""
    return {
        "http_proxy": get("http_proxy"),
        "https_proxy": get("https_proxy"),
        "no_proxy": tuple(host.strip() for host in no_proxy.split(",") if host.strip()),
    }
