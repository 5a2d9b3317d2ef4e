"""Fetching: the robots gate, sitemaps, the session, the fetcher (the only aiohttp user),
the fetch stack and one request's page job."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._fetcher import FollowPolicy as FollowPolicy
    from ._fetcher import RedirectTrail as RedirectTrail
    from ._fetcher import Response as Response
    from ._gate import BLOCKED as BLOCKED
    from ._gate import RobotsGate as RobotsGate
    from ._pagejob import PageJob as PageJob
    from ._pagejob import ParseFn as ParseFn
    from ._pagejob import PoliteClient as PoliteClient
    from ._pagejob import failed as failed
    from ._robots import RobotsRules as RobotsRules
    from ._session import load_cookie_file as load_cookie_file
    from ._sitemaps import MAX_SITEMAP_BYTES as MAX_SITEMAP_BYTES
    from ._sitemaps import discover as discover
    from ._sitemaps import sitemap_urls as sitemap_urls
    from ._stack import FetchStack as FetchStack

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "BLOCKED": "._gate",
    "FetchStack": "._stack",
    "FollowPolicy": "._fetcher",
    "MAX_SITEMAP_BYTES": "._sitemaps",
    "PageJob": "._pagejob",
    "ParseFn": "._pagejob",
    "PoliteClient": "._pagejob",
    "RedirectTrail": "._fetcher",
    "Response": "._fetcher",
    "RobotsGate": "._gate",
    "RobotsRules": "._robots",
    "discover": "._sitemaps",
    "sitemap_urls": "._sitemaps",
    "failed": "._pagejob",
    "load_cookie_file": "._session",
}

__all__ = [
    "BLOCKED",
    "MAX_SITEMAP_BYTES",
    "FetchStack",
    "FollowPolicy",
    "PageJob",
    "ParseFn",
    "PoliteClient",
    "RedirectTrail",
    "Response",
    "RobotsGate",
    "RobotsRules",
    "discover",
    "failed",
    "load_cookie_file",
    "sitemap_urls",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
