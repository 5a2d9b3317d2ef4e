"""The report's HTML: one document of its inline styles and script under a
Content-Security-Policy that lets nothing load, the JSON block of its tables, and the markup
of cards, contents and table sections that the report and the changes page share."""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from html import escape
from importlib.resources import files
from typing import Any

from .. import _version
from ._table import Table

_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


NOSCRIPT = (
    "<noscript><p>The tables need JavaScript; the summary and charts do not.</p></noscript>\n"
)


def document(
    *,
    title: str,
    heading: str,
    sub: str,
    body: list[str],
    tables: list[Table],
    export_source: str = "STATE.db",
) -> str:
    """One HTML document of the report's styles and script: ``body`` (markup) in its main
    part, the data of ``tables`` in its JSON block (a cut table or list names ``sitecrawl
    export EXPORT_SOURCE``); ``title``, ``heading`` and ``sub`` are text."""
    css, js = _asset("report.css"), _asset("report.js")
    payload = embed_json({"tables": [table.to_json(export_source) for table in tables]})
    return "".join(
        [
            '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{csp(css, js)}">\n',
            '<meta name="referrer" content="no-referrer">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n",
            f'<header class="top"><div class="wrap"><h1>{escape(heading)}</h1>',
            f'<div class="sub">{escape(sub)} by sitecrawl {_version.__version__}',
            '</div></div></header>\n<main class="wrap">\n',
            *body,
            "<footer>Generated offline by sitecrawl. This file loads nothing from the network."
            "</footer>\n</main>\n",
            f'<script type="application/json" id="report-data">{payload}</script>\n',
            f"<script>{js}</script>\n</body>\n</html>\n",
        ]
    )


def embed_json(value: Any) -> str:
    """JSON that is inert inside a ``<script>`` block: it cannot end the block or open a
    comment, and U+2028/U+2029 cannot break older JavaScript parsers."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _JSON_ESCAPES:
        text = text.replace(raw, escaped)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from a broken page: keep the file writable
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def csp(css: str, js: str) -> str:
    """The policy: nothing loads; only this exact inline style and script apply."""
    return (
        "default-src 'none'; "
        f"style-src '{_sha256(css)}'; script-src '{_sha256(js)}'; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def _sha256(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


@cache
def _asset(name: str) -> str:
    return files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def card(value: str, label: str, tone: str = "") -> str:
    cls = f"card {tone}".strip()
    return (
        f'<div class="{cls}"><div class="value">{escape(value)}</div>'
        f'<div class="label">{escape(label)}</div></div>'
    )


def contents(tables: list[Table]) -> str:
    links = []
    for table in tables:
        n = table.count
        tone = "" if not table.is_issue else ("some" if n else "zero")
        links.append(
            f'<a href="#{table.id}">{escape(table.title)}<span class="n {tone}">{n:,}</span></a>'
        )
    return f'<nav class="toc" aria-label="Contents">{"".join(links)}</nav>\n'


def section(table: Table, export_source: str) -> str:
    n = table.count
    tone = "" if not table.is_issue else ("some" if n else "zero")
    more = ""
    if table.more:
        command = table.export_command(export_source)
        more = (
            f'<p class="help more">The first {len(table.rows):,} rows of {n:,}; '
            f"{table.more:,} more: <code>{escape(command)}</code></p>"
        )
    return (
        f'<section class="block" id="{table.id}"><h2>{escape(table.title)}'
        f'<span class="pill {tone}">{n:,}</span></h2>'
        f'<p class="help">{escape(table.help)}</p>{more}'
        f'<div class="datatable" data-table="{table.id}" data-total="{len(table.rows)}"></div>'
        "</section>\n"
    )
