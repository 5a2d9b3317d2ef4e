"""What is wrong with a crawled site: rows, findings, the link check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._check import INTERRUPTED as INTERRUPTED
    from ._check import TIME_LIMIT as TIME_LIMIT
    from ._check import check_outcome as check_outcome
    from ._check import format_text as format_text
    from ._check import junit_xml as junit_xml
    from ._findings import DEFAULT_SLOW_LIMIT as DEFAULT_SLOW_LIMIT
    from ._findings import DEFAULT_SLOW_MS as DEFAULT_SLOW_MS
    from ._findings import NAVIGATION_KINDS as NAVIGATION_KINDS
    from ._findings import TEXT_FIELDS as TEXT_FIELDS
    from ._findings import Audit as Audit
    from ._findings import Referrer as Referrer
    from ._findings import TextField as TextField
    from ._findings import audit as audit
    from ._findings import is_broken as is_broken
    from ._findings import page_key as page_key
    from ._inlinks import Inlinks as Inlinks
    from ._inlinks import fill_inlinks as fill_inlinks
    from ._linkcheck import LinkChecker as LinkChecker
    from ._linkcheck import TargetStatus as TargetStatus
    from ._rows import ImageRow as ImageRow
    from ._rows import LinkRow as LinkRow
    from ._rows import image_rows as image_rows
    from ._rows import link_rows as link_rows
    from ._rows import links_from_pages as links_from_pages
    from ._rows import page_rows as page_rows
    from ._site import InternalTest as InternalTest
    from ._site import js_added as js_added
    from ._site import link_kind as link_kind
    from ._site import link_row as link_row
    from ._site import link_source as link_source
    from ._site import links_source as links_source
    from ._site import site_rows as site_rows
    from ._targets import link_targets as link_targets
    from ._targets import page_links as page_links

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "Audit": "._findings",
    "DEFAULT_SLOW_LIMIT": "._findings",
    "DEFAULT_SLOW_MS": "._findings",
    "INTERRUPTED": "._check",
    "ImageRow": "._rows",
    "Inlinks": "._inlinks",
    "InternalTest": "._site",
    "LinkChecker": "._linkcheck",
    "LinkRow": "._rows",
    "NAVIGATION_KINDS": "._findings",
    "Referrer": "._findings",
    "TEXT_FIELDS": "._findings",
    "TIME_LIMIT": "._check",
    "TargetStatus": "._linkcheck",
    "TextField": "._findings",
    "audit": "._findings",
    "check_outcome": "._check",
    "fill_inlinks": "._inlinks",
    "format_text": "._check",
    "image_rows": "._rows",
    "is_broken": "._findings",
    "js_added": "._site",
    "junit_xml": "._check",
    "link_kind": "._site",
    "link_row": "._site",
    "link_rows": "._rows",
    "links_source": "._site",
    "link_source": "._site",
    "links_from_pages": "._rows",
    "page_key": "._findings",
    "link_targets": "._targets",
    "page_links": "._targets",
    "page_rows": "._rows",
    "site_rows": "._site",
}

__all__ = [
    "DEFAULT_SLOW_LIMIT",
    "DEFAULT_SLOW_MS",
    "INTERRUPTED",
    "NAVIGATION_KINDS",
    "TEXT_FIELDS",
    "TIME_LIMIT",
    "Audit",
    "ImageRow",
    "Inlinks",
    "InternalTest",
    "LinkChecker",
    "LinkRow",
    "Referrer",
    "TargetStatus",
    "TextField",
    "audit",
    "check_outcome",
    "fill_inlinks",
    "format_text",
    "image_rows",
    "is_broken",
    "js_added",
    "junit_xml",
    "link_kind",
    "link_row",
    "link_rows",
    "link_source",
    "link_targets",
    "links_from_pages",
    "links_source",
    "page_key",
    "page_links",
    "page_rows",
    "site_rows",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
