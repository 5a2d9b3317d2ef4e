"""The one-file HTML report of a crawl: summary, SVG charts, sortable and filterable tables.

::

    from sitecrawl.report import ReportData, render_report

    data = ReportData.build(base_url=start_url, pages=[page.to_dict() for page in pages])
    Path("report.html").write_text(render_report(data), encoding="utf-8")

The file loads nothing from the network: CSS, JavaScript and charts are inline, pinned by a
Content-Security-Policy, and every crawled string reaches the page as text only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # what type checkers see; at run time, __getattr__ imports on first use
    from ._build import store_report_data as store_report_data
    from ._changes import render_changes as render_changes
    from ._data import CrawlMeta as CrawlMeta
    from ._data import ReportData as ReportData
    from ._render import render_report as render_report

#: Public name -> the private module it lives in, imported on first use (``__getattr__``).
_LAZY = {
    "CrawlMeta": "._data",
    "ReportData": "._data",
    "render_changes": "._changes",
    "render_report": "._render",
    "store_report_data": "._build",
}

__all__ = [
    "CrawlMeta",
    "ReportData",
    "render_changes",
    "render_report",
    "store_report_data",
]


__getattr__ = lazy_getattr(__name__, _LAZY)
