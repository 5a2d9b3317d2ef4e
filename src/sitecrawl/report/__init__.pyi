# The public names of sitecrawl.report, each once (its __init__.py serves them lazily).

from ._build import store_issue_rows as store_issue_rows
from ._build import store_near_duplicate_rows as store_near_duplicate_rows
from ._build import store_report_data as store_report_data
from ._changes import render_changes as render_changes
from ._data import CrawlMeta as CrawlMeta
from ._data import ReportData as ReportData
from ._render import render_report as render_report
