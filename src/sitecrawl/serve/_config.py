"""The server's own settings (``sitecrawl serve``'s options), frozen and passed explicitly."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from .._exceptions import ConfigError

DEFAULT_PORT = 8080
DEFAULT_MAX_CRAWLS = 2


@dataclass(frozen=True, kw_only=True, slots=True)
class ServeConfig:
    """``data``: the directory of the crawls' state files and the server's bookkeeping;
    ``token``: every request but the UI's page itself needs ``Authorization: Bearer TOKEN``
    (None: none needed, only allowed on a loopback address); ``max_crawls`` run at once (the
    rest queue); ``allow_hosts``: globs of the hosts API callers may crawl (empty: any);
    ``allow_private_targets``: whether their start URLs may be on loopback, private or
    link-local addresses (None: yes when ``host`` is a loopback address, no otherwise; see
    :attr:`private_targets`)."""

    data: str
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    max_crawls: int = DEFAULT_MAX_CRAWLS
    allow_hosts: tuple[str, ...] = ()
    allow_private_targets: bool | None = None

    def __post_init__(self) -> None:
        if self.max_crawls < 1:
            raise ConfigError(f"max_crawls must be at least 1, got {self.max_crawls}")
        if self.token is not None and not self.token:
            raise ConfigError("an empty token protects nothing: give a token or none")
        if self.token is None and not is_loopback(self.host):
            raise ConfigError(
                f"serving on {self.host} (not a loopback address) needs a token: give --token"
                " or SITECRAWL_TOKEN"
            )

    @property
    def private_targets(self) -> bool:
        """Whether API callers may crawl loopback, private and link-local addresses: as
        told, else only when the server is reachable from this machine alone (its users
        are this machine's; elsewhere a caller would reach the server's networks)."""
        if self.allow_private_targets is not None:
            return self.allow_private_targets
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (the address the server binds) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
