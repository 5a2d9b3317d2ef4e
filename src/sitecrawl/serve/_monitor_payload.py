"""A monitor's webhook: the JSON body of one run's changes, its Slack form, and its signature
(pure, no I/O).

The body (``format: json``)::

    {"event": "changes", "monitor": ID, "url": URL, "crawl": N, "previous_crawl": M,
     "summary": {"pages": ..., "errors": ..., "changes": TOTAL, "counts": {kind: n}},
     "failing": [kinds of fail_on found], "changes": [{url, kind, field, old, new}, ...],
     "changes_total": TOTAL, "truncated": bool, "diff_url": URL of the whole diff}

``changes`` holds at most :data:`MAX_CHANGES` rows, most severe first; ``diff_url`` is
``GET /api/monitors/{id}/diff?crawl=N`` (every change). The signature is
``X-Sitecrawl-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes with the secret>``,
what a receiver recomputes over the bytes it got before parsing them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Sequence
from typing import Any

from .._diff import Change

#: Changes a webhook body carries at most (the rest: ``diff_url``).
MAX_CHANGES = 50
#: Changes a Slack message lists at most (a section's text is capped at 3,000 characters).
SLACK_CHANGES = 10
#: A Slack listing's characters at most (a section's text may have 3,000), and of a value.
SLACK_TEXT = 2_800
SLACK_VALUE = 120
#: A value in a change row is cut to this many characters.
MAX_VALUE = 300
SIGNATURE_HEADER = "X-Sitecrawl-Signature"


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_VALUE:
        return value[:MAX_VALUE] + "…"
    return value


def change_row(change: Change) -> dict[str, Any]:
    return {
        "url": change.url,
        "kind": change.kind,
        "field": change.field,
        "old": _cut(change.old),
        "new": _cut(change.new),
    }


def counts(changes: Sequence[Change]) -> dict[str, int]:
    found: dict[str, int] = {}
    for change in changes:
        found[change.kind] = found.get(change.kind, 0) + 1
    return found


def payload(
    *,
    monitor: str,
    url: str,
    crawl: int,
    previous_crawl: int | None,
    pages: int,
    errors: int,
    changes: Sequence[Change],
    fail_on: Sequence[str],
    diff_url: str,
) -> dict[str, Any]:
    """The webhook's JSON object for one run (see the module's docstring)."""
    return {
        "event": "changes",
        "monitor": monitor,
        "url": url,
        "crawl": crawl,
        "previous_crawl": previous_crawl,
        "summary": {
            "pages": pages,
            "errors": errors,
            "changes": len(changes),
            "counts": counts(changes),
        },
        "failing": sorted({c.kind for c in changes if c.kind in fail_on}),
        "changes": [change_row(change) for change in changes[:MAX_CHANGES]],
        "changes_total": len(changes),
        "truncated": len(changes) > MAX_CHANGES,
        "diff_url": diff_url,
    }


def slack_message(body: dict[str, Any]) -> dict[str, Any]:
    """Slack's incoming-webhook shape of a :func:`payload`: ``text`` (the notification) and
    ``blocks`` (a header line, the counts, the first :data:`SLACK_CHANGES` changes, the link
    to the whole diff)."""
    summary = body["summary"]
    counted = ", ".join(f"{kind}: {n}" for kind, n in summary["counts"].items()) or "no changes"
    failing = f" (failing: {', '.join(body['failing'])})" if body["failing"] else ""
    text = f"sitecrawl: {summary['changes']} changes on {body['url']}{failing}"
    lines: list[str] = []
    size = 0
    for row in body["changes"][:SLACK_CHANGES]:
        line = f"• `{row['kind']}` {row['url'][:SLACK_VALUE]}"
        if row["field"] is not None:
            old, new = (repr(row[key])[:SLACK_VALUE] for key in ("old", "new"))
            line += f" {row['field']}: {old} → {new}"
        if size + len(line) > SLACK_TEXT:
            break
        lines.append(line)
        size += len(line) + 1
    more = body["changes_total"] - len(lines)
    if more > 0:
        lines.append(f"… and {more} more")
    listing = "\n".join(lines) or "no changes"
    return {
        "text": text,
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{text}*\n{counted}"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": listing}},
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"crawl {body['crawl']} of monitor {body['monitor']}:"
                        f" <{body['diff_url']}|the whole diff>",
                    }
                ],
            },
        ],
    }


def encode(message: dict[str, Any]) -> bytes:
    """The exact bytes sent (and signed)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def signature(body: bytes, secret: str) -> str:
    """``sha256=<hex HMAC-SHA256 of body with secret>``."""
    digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"
