"""Failures are typed data: every error class has a stable ``kind``, translated once at the
fetcher's boundary, recorded in ``Page.error_kind`` and compared by every consumer (never the
message). The real-server side (timeouts, robots, redirects, cut bodies) is in
test_politeness.py."""

from __future__ import annotations

import socket
from pathlib import Path

import aiohttp
import pytest

import sitecrawl
from sitecrawl import Page
from sitecrawl._exceptions import ERROR_KINDS, FetchError, ParseError
from sitecrawl.audit import check_outcome
from sitecrawl.fetch._fetcher import _map_errors

S = "http://site.test"


def test_every_kind_is_stable_unique_and_documented() -> None:
    assert list(ERROR_KINDS) == [
        "parse",
        "render",
        "pdf_encrypted",
        "pdf_broken",
        "fetch",
        "http_status",
        "not_html",
        "too_large",
        "timeout",
        "connect",
        "dns",
        "tls",
        "blocked_address",
        "too_many_redirects",
        "redirect_loop",
        "redirect_out_of_scope",
        "blocked_robots",
        "robots_unreachable",
        "protocol",
    ]
    public = {
        value
        for name in sitecrawl.__all__
        if isinstance(value := getattr(sitecrawl, name), type)
        and issubclass(value, FetchError | ParseError)
    }
    assert public == set(ERROR_KINDS.values())  # each class its own kind, each one exported
    tree = sitecrawl._exceptions.__doc__ or ""
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    for kind, cls in ERROR_KINDS.items():
        assert f"{cls.__name__} " in tree and f" {kind} " in tree, kind
        if kind not in ("fetch", "not_html"):  # never in a record: a base, the course API's
            assert f"`{kind}`" in readme, kind


class _Key:
    host, port, ssl = "nowhere.test", 80, False


@pytest.mark.parametrize(
    ("raised", "kind"),
    [
        (aiohttp.ClientConnectorDNSError(_Key(), OSError(-2, "Name or service not known")), "dns"),
        (aiohttp.ClientConnectorError(_Key(), socket.gaierror(-3, "Temporary failure")), "dns"),
        (aiohttp.ClientConnectorError(_Key(), ConnectionRefusedError(111, "refused")), "connect"),
        (aiohttp.ServerDisconnectedError(), "connect"),
        (TimeoutError(), "timeout"),
        (aiohttp.ClientPayloadError("bad chunk"), "protocol"),
    ],
)
def test_foreign_errors_get_their_kind_at_the_boundary(raised: Exception, kind: str) -> None:
    with pytest.raises(FetchError) as caught, _map_errors(S + "/"):
        raise raised
    assert caught.value.kind == kind
    assert caught.value.url == S + "/"


def test_check_knows_a_redirect_out_of_the_site_by_its_kind_not_its_message() -> None:
    home = Page(
        url=S + "/",
        status=200,
        links=[(S + "/away", "Away", None, "a"), (S + "/gone", "Gone", None, "a")],
    )
    away = Page(
        url=S + "/away",
        status=302,
        depth=1,
        error="left the site",  # any wording: nothing reads it back
        error_kind="redirect_out_of_scope",
        location="https://other.test/new",
    )
    # The same words with another kind: a redirect that went nowhere, broken.
    gone = Page(
        url=S + "/gone",
        status=302,
        depth=1,
        error="redirect out of scope: https://other.test/x",
        error_kind="redirect_loop",
    )
    outcome = check_outcome([home, away, gone], S + "/", {})
    assert [b.target_url for b in outcome.broken] == [S + "/gone"]
    (redirect,) = outcome.redirects
    assert (redirect.url, redirect.final_url) == (S + "/away", "https://other.test/new")
    assert redirect.hops == ((S + "/away", 302),)
