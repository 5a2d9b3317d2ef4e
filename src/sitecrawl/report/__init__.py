"""The one-file HTML report of a crawl: summary, SVG charts, sortable and filterable tables.

::

    from sitecrawl.report import ReportData, render_report

    data = ReportData.build(base_url=start_url, pages=[page.to_dict() for page in pages])
    Path("report.html").write_text(render_report(data), encoding="utf-8")

The file loads nothing from the network: CSS, JavaScript and charts are inline, pinned by a
Content-Security-Policy, and every crawled string reaches the page as text only.
"""

from __future__ import annotations

from .._lazy import lazy_face

# The public names, each once, are the stub's (__init__.pyi: what type checkers read); a
# name is imported from its module on first use.
_LAZY, __all__, __getattr__ = lazy_face(__name__, __file__)
