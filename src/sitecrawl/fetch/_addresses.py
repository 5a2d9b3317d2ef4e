"""Which addresses a crawl may connect to: the rules, pure (the fetcher's resolver applies them
to every address a host resolves to, at connect time).

A crawl run on a cloud machine must never hand a site the machine's credentials: a redirect, a
link, a sitemap or a robots.txt redirect to ``http://169.254.169.254/latest/meta-data/`` (or to
a name that resolves there) is refused, and so is one into the crawling machine's own networks
from a public site. Addresses fall into classes, ordered from the least private::

    public < private (RFC 1918, ULA fc00::/7, CGNAT, any other non-global) < loopback

and link-local (169.254.0.0/16, fe80::/10) apart. The start URLs given are always connected to:
the first resolution of each start host sets the crawl's *ceiling*, the most private class
among their addresses. Any other connection (and a start host's after its DNS entry expired: a
name rebound elsewhere) may go to an address the start hosts resolved to, or to one of a class
no more private than the ceiling (``allow_private`` lifts this rule); a link-local address
never, unless a start host resolved to it. An IPv4-mapped IPv6 address is judged as its IPv4
address, and ``0.0.0.0/8`` and ``::`` (which reach the machine itself) as loopback.

Before it refuses for the class rule, the guard's caller resolves the start hosts not resolved
yet (:meth:`AddressGuard.unsettled`), so the answer does not depend on which host was
connected to first.

``public_only`` (a server's API callers, ``sitecrawl serve``) holds every connection to public
addresses, the start hosts' included, at every resolution: a server that checked a start
URL's address when the crawl was asked for is not led elsewhere by a name rebound since (DNS
rebinding to 169.254.169.254 or to the server's own network).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence

from .._exceptions import BlockedAddress

PUBLIC, PRIVATE, LOOPBACK, LINK_LOCAL = 0, 1, 2, 3
CLASS_NAMES = ("public", "private", "loopback", "link-local")
#: Start hosts resolved before a refusal for the class rule, at most (a long list's first).
MAX_SETTLE = 10
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")


def address_class(address: str) -> int:
    """:data:`PUBLIC`, :data:`PRIVATE`, :data:`LOOPBACK` or :data:`LINK_LOCAL`."""
    ip = ipaddress.ip_address(address.partition("%")[0])  # fe80::1%eth0: its zone dropped
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_link_local:
        return LINK_LOCAL
    if ip.is_loopback or ip.is_unspecified or ip in _THIS_NETWORK:
        return LOOPBACK
    return PUBLIC if ip.is_global else PRIVATE


def is_address(host: str) -> bool:
    """Whether ``host`` (a URL's host, without brackets) is an IP address, not a name."""
    try:
        ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return False
    return True


class AddressGuard:
    """The address rules of one crawl: ``start_hosts`` (the host names or addresses of the
    start URLs given) are connected to whatever they resolve to the first time; ``exempt``
    hosts (proxies) always; with ``public_only``, every other host only at public addresses.
    :meth:`admit` says which of a host's addresses may be connected to."""

    __slots__ = (
        "_allow_private",
        "_exempt",
        "_public_only",
        "_start_addresses",
        "_unresolved",
        "ceiling",
    )

    def __init__(
        self,
        start_hosts: Iterable[str],
        *,
        allow_private: bool,
        exempt: Iterable[str] = (),
        public_only: bool = False,
    ) -> None:
        self._public_only = public_only
        self._allow_private = allow_private and not public_only
        self._exempt = frozenset(exempt)
        #: Start hosts not resolved yet, in order (a dict as an ordered set).
        self._unresolved = dict.fromkeys(start_hosts)
        self._start_addresses: set[str] = set()
        #: The most private class among the start hosts' addresses (link-local aside).
        self.ceiling = PUBLIC

    def unsettled(self, host: str, addresses: Sequence[str]) -> list[str]:
        """The start hosts to resolve (and :meth:`settle`) before :meth:`admit` may refuse
        ``addresses`` for the class rule; empty when nothing would be refused for it."""
        if not self._unresolved or self._allow_private or self._public_only:
            return []
        if host in self._unresolved:
            return []
        if host in self._exempt:
            return []
        if all(self._passes(address) or self._kind(address) == LINK_LOCAL for address in addresses):
            return []
        return list(self._unresolved)[:MAX_SETTLE]

    def settle(self, host: str, addresses: Sequence[str]) -> None:
        """``host``, a start host, resolved to ``addresses``: the first time, they are its own
        and join the ceiling."""
        if host not in self._unresolved or self._public_only:
            return
        del self._unresolved[host]
        for address in addresses:
            self._start_addresses.add(address)
            kind = self._kind(address)
            if kind != LINK_LOCAL:
                self.ceiling = max(self.ceiling, kind)

    def admit(self, host: str, addresses: Sequence[str]) -> list[str]:
        """Those of ``addresses`` (what ``host`` resolved to) that may be connected to; raises
        :class:`BlockedAddress` when none may."""
        if host in self._exempt:
            return list(addresses)
        self.settle(host, addresses)
        allowed = [address for address in addresses if self._passes(address)]
        if not allowed and addresses:
            address = addresses[0]
            kind = self._kind(address)
            if self._public_only:
                why = f"a {CLASS_NAMES[kind]} address (this crawl connects to public ones only)"
            elif kind == LINK_LOCAL:
                why = "a link-local address"
            else:
                why = (
                    f"{CLASS_NAMES[kind]}, more private than the start URLs"
                    f" ({CLASS_NAMES[self.ceiling]}; --allow-private-redirects to go there)"
                )
            shown = address if address == host else f"{host} ({address})"
            raise BlockedAddress(f"not connected to {shown}: {why}", url=host, address=address)
        return allowed

    def _passes(self, address: str) -> bool:
        if self._public_only:
            return self._kind(address) == PUBLIC
        if address in self._start_addresses:
            return True
        kind = self._kind(address)
        if kind == LINK_LOCAL:
            return False
        return self._allow_private or kind <= self.ceiling

    @staticmethod
    def _kind(address: str) -> int:
        try:
            return address_class(address)
        except ValueError:  # not an address: judged as the most private that may be reached
            return LOOPBACK
