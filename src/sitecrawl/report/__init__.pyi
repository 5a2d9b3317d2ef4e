"""The one-file HTML report of a crawl: summary, SVG charts, sortable and filterable tables.

::

    from sitecrawl.report import ReportData, render_report

    data = ReportData.build(base_url=start_url, pages=[page.to_dict() for page in pages])
    Path("report.html").write_text(render_report(data), encoding="utf-8")

The file loads nothing from the network: CSS, JavaScript and charts are inline, pinned by a
Content-Security-Policy, and every crawled string reaches the page as text only.
"""

from ._build import store_report_data as store_report_data
from ._changes import render_changes as render_changes
from ._data import CrawlMeta as CrawlMeta
from ._data import ReportData as ReportData
from ._render import render_report as render_report
