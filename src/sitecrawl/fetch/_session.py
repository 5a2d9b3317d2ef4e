"""What goes out with each request besides its URL, decided once per crawl: the ``Authorization``
value of HTTP Basic, the cookies of a Netscape cookies.txt, and which proxy (with the headers
that authenticate to it) carries a request to a URL. No aiohttp here: the fetcher applies them,
and only to the hosts the crawl trusts.
"""

from __future__ import annotations

import base64
import http.cookiejar
import time
import urllib.request

from yarl import URL

from .._config_requests import Requests
from .._exceptions import ConfigError


def load_cookie_file(path: str) -> list[http.cookiejar.Cookie]:
    """The unexpired cookies of a Netscape cookies.txt (as curl and wget read it; an expiry
    of 0 is a session cookie, as curl writes it); :class:`ConfigError` when it cannot be
    read."""
    jar = http.cookiejar.MozillaCookieJar()
    try:
        jar.load(path, ignore_discard=True, ignore_expires=True)
    except (OSError, http.cookiejar.LoadError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigError(f"cannot read cookies file {path}: {reason}") from None
    now = time.time()
    return [cookie for cookie in jar if not cookie.expires or cookie.expires > now]


#: A proxy's URL (no user info) and the headers that authenticate to it (or None).
ProxyRoute = tuple[URL, dict[str, str] | None]


class Proxies:
    """Which proxy (and the headers that authenticate to it) carries a request to a URL."""

    def __init__(self, requests: Requests) -> None:
        self._all = _proxy_url(requests.proxy)
        self._by_scheme = {
            "http": _proxy_url(requests.http_proxy),
            "https": _proxy_url(requests.https_proxy),
        }
        self._bypass = {"no": ",".join(requests.no_proxy)}
        self._hosts: dict[str, ProxyRoute | None] = {}
        self.any = self._all is not None or any(self._by_scheme.values())

    def for_url(self, url: URL) -> ProxyRoute | None:
        if self._all is not None:
            return self._all
        key = f"{url.scheme}://{url.host_port_subcomponent}"
        if key not in self._hosts:
            proxy = self._by_scheme.get(url.scheme)
            # The stdlib's NO_PROXY matcher (curl's syntax), given the list: it reads no env.
            bypass = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
            if proxy is not None and bypass(url.host_port_subcomponent or "", self._bypass):
                proxy = None
            self._hosts[key] = proxy
        return self._hosts[key]


def basic_auth(user: str, password: str) -> str:
    """An ``Authorization`` value for HTTP Basic (RFC 7617, UTF-8)."""
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")


def _proxy_url(text: str | None) -> ProxyRoute | None:
    """A proxy URL without its user info, and that user info as Proxy-Authorization."""
    if not text:
        return None
    url = URL(text)
    if url.user is None:
        return url, None
    auth = basic_auth(url.user, url.password or "")
    return url.with_user(None), {"Proxy-Authorization": auth}
