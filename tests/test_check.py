"""``sitecrawl check``: exact broken-link sets, referrers, anchor texts, exit codes, JUnit XML.

The site is real (tests/audit_site.py) and so are its "external" hosts: other loopback servers,
one healthy, one answering 404/500, and a port where nothing listens.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import xmlschema

from audit_site import AuditSites, Externals, audit_app, broken_app, healthy_app, unused_port
from conftest import ServeFn
from sitecrawl._cli import main

SCHEMA = xmlschema.XMLSchema(Path(__file__).parent / "data" / "junit-ant.xsd")
# --retries 1: retried failures are seen, and each retry waits a fraction of a second only.
FAST = ["--retries", "1", "-q"]


@pytest.fixture
def sites(serve: ServeFn) -> AuditSites:
    healthy, broken = serve(healthy_app()), serve(broken_app())
    ext = Externals(healthy.url, broken.url, f"http://127.0.0.1:{unused_port()}")
    return AuditSites(serve(audit_app(ext)), healthy, broken, ext)


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    yield
    assert not list(tmp_path.glob("*.sitecrawl.db"))  # check leaves no state file behind


def blocks(out: str) -> dict[str, list[str]]:
    """The report's entries: first line -> its "from ..." lines."""
    found: dict[str, list[str]] = {}
    current: list[str] = []
    for line in out.splitlines():
        if line.startswith("    from "):
            current.append(line.strip())
        elif line.startswith(("BROKEN ", "warning: redirect ", "REDIRECT ")):
            current = found.setdefault(line, [])
    return found


def test_check_reports_each_broken_target_with_referrers_and_exits_1(
    sites: AuditSites, capsys: pytest.CaptureFixture[str]
) -> None:
    s = sites.site.url
    assert main(["check", s, *FAST]) == 1
    out = capsys.readouterr().out
    assert blocks(out) == {
        f"BROKEN {s}/missing  HTTP 404  (internal)": [
            f'from {s}/ "Missing page" [a]',
            f'from {s}/about "gone again" [a]',
        ],
        f"BROKEN {s}/boom  HTTP 500  (internal)": [f'from {s}/about "Crash" [a]'],
        f"BROKEN {s}/img/missing.png  HTTP 404  (internal)": [f"from {s}/ [img]"],
        f"BROKEN {s}/private/secret  blocked by robots.txt  (internal)": [
            f'from {s}/ "Secret" [a]'
        ],
        f"warning: redirect {s}/old  {s}/old (301) -> {s}/older (302) -> {s}/about (200)": [
            f'from {s}/ "Old page" [a]'
        ],
    }
    assert out.endswith(
        "10 link targets checked: 4 broken, 1 redirected;"
        " 7 not checked: 7 external (no --external)\n"
    )
    # Nothing external was asked; the robots-blocked page was not fetched; the site's
    # resources were, once each (HEAD), and the 500 page was retried once.
    assert sites.healthy.traffic.paths == sites.broken.traffic.paths == []
    paths = sites.site.traffic.paths
    assert "/private/secret" not in paths
    assert sorted(p for p in paths if p.startswith(("/img/", "/style"))) == [
        "/img/logo.png",
        "/img/missing.png",
        "/style.css",
    ]
    assert paths.count("/boom") == 2


def test_external_checks_each_url_once_head_then_get_politely_with_retries(
    sites: AuditSites, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    s, ext = sites.site.url, sites.ext
    assert main(["check", s, "--external", "--junit", "report.xml", *FAST]) == 1
    out = capsys.readouterr().out
    found = blocks(out)
    external = {
        line: refs
        for line, refs in found.items()
        if not line.split("  ")[0].split()[-1].startswith(s + "/")
    }
    refused = f"BROKEN {ext.refused}/x  connection refused (127.0.0.1:"
    assert {line.split("  ")[0] for line in external} == {
        f"BROKEN {ext.broken}/gone",
        f"BROKEN {ext.broken}/error",
        f"BROKEN {ext.refused}/x",
        f"warning: redirect {ext.healthy}/moved",
    }
    assert [refs for line, refs in external.items() if line.startswith(refused)] == [
        [f'from {s}/ "Dead host" [a]']
    ]
    assert external[f"BROKEN {ext.broken}/gone  HTTP 404  (external)"] == [
        f'from {s}/ "Gone elsewhere" [a]'
    ]
    assert external[f"BROKEN {ext.broken}/error  HTTP 500  (external)"] == [
        f'from {s}/ "Erroring" [a]'
    ]
    h = ext.healthy
    moved = f"warning: redirect {h}/moved  {h}/moved (301) -> {h}/ok (200)"
    assert external[moved] == [f'from {s}/ "Moved away" [a]']
    assert "17 link targets checked: 7 broken, 2 redirected\n" in out
    # HEAD first; GET only where HEAD was refused (405); the 503 was retried and then passed;
    # the 500 retried once; nothing asked twice otherwise.
    healthy = sorted(sites.healthy.traffic.paths)
    assert healthy == sorted(
        ["/ok", "/ok", "/moved", "/head-refused", "/head-refused", "/flaky", "/flaky"]
    )
    assert sorted(sites.broken.traffic.paths) == ["/error", "/error", "/gone"]

    # JUnit: valid against the schema; a test case per checked target, failures for the broken.
    xml = tmp_path / "report.xml"
    SCHEMA.validate(str(xml))
    suite = ET.parse(xml).getroot()
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert suite.get("tests") == str(len(cases)) == "17"
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    assert failed == {
        f"{s}/missing",
        f"{s}/boom",
        f"{s}/img/missing.png",
        f"{s}/private/secret",
        f"{ext.broken}/gone",
        f"{ext.broken}/error",
        f"{ext.refused}/x",
    }
    assert suite.get("failures") == "7"
    failure = cases[f"{s}/missing"].find("failure")
    assert failure is not None and failure.get("message") == "HTTP 404"
    assert failure.text == f'from {s}/ "Missing page" [a]\nfrom {s}/about "gone again" [a]'
    assert cases[f"{ext.healthy}/ok"].get("classname") == "external"
    assert cases[f"{s}/about"].get("classname") == "internal"
    system_out = suite.find("system-out")
    assert system_out is not None and f"{ext.healthy}/moved" in (system_out.text or "")


def test_clean_site_exits_0_and_fail_on_redirect_makes_redirects_failures(
    serve: ServeFn, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    site = serve(audit_app(None, clean=True))
    assert main(["check", site.url, *FAST]) == 0
    out = capsys.readouterr().out
    assert "3 link targets checked: 0 broken, 1 redirected\n" in out
    assert f"warning: redirect {site.url}/old " in out
    assert main(["check", site.url, "--fail-on-redirect", "--junit", "r.xml", *FAST]) == 1
    out = capsys.readouterr().out
    assert f"REDIRECT {site.url}/old " in out
    SCHEMA.validate(str(tmp_path / "r.xml"))
    suite = ET.parse(tmp_path / "r.xml").getroot()
    failures = [
        case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None
    ]
    assert failures == [f"{site.url}/old"] and suite.get("failures") == "1"


def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert main(["check", "ftp://x.test/"]) == 2
    assert main(["check", "http://x.test/", "--fresh"]) == 2
    assert main(["check", "http://x.test/", "--junit", "/no/such/dir/r.xml"]) == 2
    assert "--fresh needs --state" in capsys.readouterr().err
