"""The one-file HTML report of a crawl: summary, SVG charts, sortable and filterable tables.

::

    from sitecrawl.report import ReportData, render_report

    data = ReportData.build(base_url=start_url, pages=[page.to_dict() for page in pages])
    Path("report.html").write_text(render_report(data), encoding="utf-8")

The file loads nothing from the network: CSS, JavaScript and charts are inline, pinned by a
Content-Security-Policy, and every crawled string reaches the page as text only.
"""

from ._data import CrawlMeta, ReportData
from ._render import render_report

__all__ = ["CrawlMeta", "ReportData", "render_report"]
