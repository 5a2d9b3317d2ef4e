"""Posting a monitor's webhook: the exact bytes, signed, retried with exponential backoff.

An answer 2xx is delivered. A connection error, a timeout, 408, 429 or 5xx is tried again
after ``backoff * 2**n`` seconds (n = 0, 1, ...), up to ``attempts`` tries in all; any other
answer (a 4xx: the receiver refuses it) ends the delivery at once. Redirects are not followed
(a webhook URL that moved is a failure to see, not a place to send secrets on to). What
happened is a :class:`Delivery`, stored by the service and shown by the API.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aiohttp

from ._monitor_payload import SIGNATURE_HEADER, signature

#: Statuses tried again (besides connection errors and timeouts).
RETRIED = frozenset({408, 429, 500, 502, 503, 504})
#: Seconds one attempt may take.
TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Delivery:
    ok: bool
    attempts: int
    http_status: int | None
    error: str | None


async def deliver(
    session: aiohttp.ClientSession,
    url: str,
    body: bytes,
    *,
    secret: str | None,
    delivery_id: str,
    attempts: int = 5,
    backoff: float = 1.0,
) -> Delivery:
    """POST ``body`` to ``url`` (see the module's docstring)."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "sitecrawl-monitor",
        "X-Sitecrawl-Event": "changes",
        "X-Sitecrawl-Delivery": delivery_id,
    }
    if secret is not None:
        headers[SIGNATURE_HEADER] = signature(body, secret)
    status: int | None = None
    error: str | None = None
    for attempt in range(1, attempts + 1):
        try:
            async with session.post(
                url,
                data=body,
                headers=headers,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=TIMEOUT),
            ) as response:
                status = response.status
                await response.read()
            if 200 <= status < 300:
                return Delivery(True, attempt, status, None)
            error = f"HTTP {status}"
            if status not in RETRIED:
                return Delivery(False, attempt, status, error)
        except (aiohttp.ClientError, TimeoutError) as exc:
            status, error = None, f"{type(exc).__name__}: {exc}".rstrip(": ")
        if attempt < attempts:
            await asyncio.sleep(backoff * 2 ** (attempt - 1))
    return Delivery(False, attempts, status, error)
