"""The report's sections of rendered pages: their accessibility violations (``--a11y``) and
their screenshots (``--screenshot``: each page's JPEG thumbnail read from beside its PNG and
embedded as a ``data:`` URL, the only images the report's policy loads). Reads the thumbnails'
files; the rest is pure."""

from __future__ import annotations

import base64

from .._models import Page
from ..render import thumbnail_path
from ._data import ReportData
from ._table import Table, cell_text

#: Thumbnails a report embeds at most (a few KB each); the rest are listed without one.
MAX_THUMBS = 500


def rendered_tables(data: ReportData) -> list[Table]:
    """The Accessibility and Screenshots tables (empty when no page has any)."""
    violations = [
        [
            page.final_url or page.url,
            v.get("rule"),
            v.get("impact"),
            v.get("nodes"),
            v.get("help"),
            cell_text(v.get("selectors") or None),
        ]
        for page in data.pages
        for v in page.a11y
    ]
    shots = [page for page in data.pages if page.screenshot]
    return [
        Table(
            "a11y",
            "Accessibility",
            "axe-core's violations of each rendered page (crawled with --render and --a11y):"
            " the rule, its impact, how many elements break it and the first ones' selectors."
            " In the issues table each is a row of check a11y.RULE.",
            (
                ("URL", "url"),
                ("Rule", "text"),
                ("Impact", "text"),
                ("Elements", "num"),
                ("Help", "text"),
                ("Selectors", "text"),
            ),
            violations,
            export="issues",
            facets=(1, 2),
        ),
        Table(
            "screenshots",
            "Screenshots",
            "A thumbnail of each rendered page (crawled with --render and --screenshot) and"
            " where its PNG is.",
            (("URL", "url"), ("Thumbnail", "thumb"), ("Screenshot", "text")),
            [
                [
                    page.final_url or page.url,
                    _thumb(page) if i < MAX_THUMBS else None,
                    page.screenshot,
                ]
                for i, page in enumerate(shots)
            ],
            is_issue=False,
        ),
    ]


def _thumb(page: Page) -> str | None:
    """The page's thumbnail as a ``data:`` URL, or None when its file is not there."""
    assert page.screenshot is not None
    try:
        with open(thumbnail_path(page.screenshot), "rb") as handle:
            jpeg = handle.read()
    except OSError:
        return None
    if not jpeg.startswith(b"\xff\xd8\xff"):
        return None
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
