"""Where a crawl goes: scope, include/exclude rules, rewrites, trap guard."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._links import LinkTargets as LinkTargets
    from ._links import TrapGuard as TrapGuard
    from ._rules import LinkRules as LinkRules
    from ._rules import Rules as Rules
    from ._rules import ScopeKind as ScopeKind
    from ._scope import CrawlScope as CrawlScope
    from ._scope import default_scope as default_scope
    from ._scope import url_path as url_path

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "CrawlScope": "._scope",
    "LinkRules": "._rules",
    "LinkTargets": "._links",
    "Rules": "._rules",
    "ScopeKind": "._rules",
    "TrapGuard": "._links",
    "default_scope": "._scope",
    "url_path": "._scope",
}

__all__ = [
    "CrawlScope",
    "LinkRules",
    "LinkTargets",
    "Rules",
    "ScopeKind",
    "TrapGuard",
    "default_scope",
    "url_path",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
