"""What ``sitecrawl check`` found, and its two renderings: text and JUnit XML. Pure, no I/O.

:func:`check_outcome` joins a crawl's page records with the targets checked apart from the
crawl (:class:`~sitecrawl.audit._linkcheck.TargetStatus`) and runs the audit on them: broken links
grouped by target with their referrers, redirected links as warnings with their chain, and one
:class:`CheckedTarget` per distinct link target whose state is known (a JUnit test case each).

The JUnit XML follows the Ant JUnit format that CI systems read (Jenkins, GitLab, GitHub
actions): one ``<testsuite>`` with ``<properties>``, a ``<testcase>`` per checked target
(``classname`` internal or external, ``name`` the URL), a ``<failure>`` for each broken one
(and each redirected one with ``--fail-on-redirect``), warnings in ``<system-out>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from .._exceptions import RedirectOutOfScope
from .._models import Page
from .._terminal import printable
from ..sinks._tables import site_rows
from ._findings import (
    BrokenLink,
    RedirectChain,
    Referrer,
    audit,
    page_key,
    referrers_by_key,
)
from ._linkcheck import TargetStatus

#: Why a link target was not checked, as the summary says it.
EXTERNAL = "external (no --external)"
BEYOND_LIMITS = "beyond the crawl's limits"
TIME_LIMIT = "cut by --max-time"
INTERRUPTED = "cut by Ctrl-C"


@dataclass(frozen=True, slots=True)
class SkippedTarget:
    """A link target the check was to ask and did not: it was stopped (``reason``)."""

    url: str
    internal: bool
    reason: str


@dataclass(frozen=True, slots=True)
class CheckedTarget:
    """One distinct link target whose answer is known (crawled, or checked apart)."""

    url: str
    internal: bool
    status: int | None
    error: str | None
    seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOutcome:
    base_url: str
    broken: tuple[BrokenLink, ...]
    redirects: tuple[RedirectChain, ...]
    checked: tuple[CheckedTarget, ...]
    unchecked: int
    fail_on_redirect: bool = False
    #: ``(reason, count)`` of the targets not checked, most first; their sum is ``unchecked``.
    unchecked_why: tuple[tuple[str, int], ...] = ()
    skipped: tuple[SkippedTarget, ...] = ()

    @property
    def failed(self) -> bool:
        return bool(self.broken) or (self.fail_on_redirect and bool(self.redirects))


def check_outcome(
    pages: Sequence[Page],
    base_url: str,
    checked: Mapping[str, TargetStatus],
    *,
    fail_on_redirect: bool = False,
    skipped: Mapping[str, str] | None = None,
    crawl_cut: str | None = None,
) -> CheckOutcome:
    """``skipped``: target URL -> why the check did not get to it (it was stopped);
    ``crawl_cut``: why the crawl stopped early (:data:`TIME_LIMIT`, :data:`INTERRUPTED`),
    said of the site's pages it did not reach."""
    skipped = skipped or {}

    def target_status(url: str) -> tuple[int | None, str | None, str | None] | None:
        found = checked.get(url)
        return None if found is None else (found.status, found.error, found.error_kind)

    rows = site_rows(pages, base_url, target_status=target_status)
    findings = audit(rows.pages, rows.links, rows.images, start_url=base_url)
    referrers = referrers_by_key(rows.links)
    broken_keys = {page_key(b.target_url) for b in findings.broken_links}
    by_key = {page_key(page.url): page for page in pages}
    redirects: dict[str, RedirectChain] = {}
    for chain in findings.redirect_chains:
        key = page_key(chain.url)
        if chain.referrers and key not in broken_keys:
            redirects[key] = RedirectChain(
                chain.url, chain.hops, chain.final_url, chain.final_status, chain.referrers
            )
    for page in pages:  # redirects that left the site: a warning, the target is not checked
        key = page_key(page.url)
        if (
            page.error_kind == RedirectOutOfScope.kind
            and page.status is not None
            and key in referrers
        ):
            hops = (*page.redirects, (page.final_url or page.url, page.status))
            redirects[key] = RedirectChain(page.url, hops, page.location, None, referrers[key])
    for url, status in checked.items():
        key = page_key(url)
        if status.hops and not status.broken and key in referrers:
            redirects.setdefault(
                key,
                RedirectChain(url, status.hops, status.final_url, status.status, referrers[key]),
            )
    targets: dict[str, CheckedTarget] = {}
    unchecked: dict[str, str] = {}
    cut: list[SkippedTarget] = []
    for link in rows.links:
        key = page_key(link.target_url)
        if key in targets or key in unchecked:
            continue
        found = checked.get(link.target_url)
        target_page = by_key.get(key)
        if found is not None:
            targets[key] = CheckedTarget(
                link.target_url, link.internal, found.status, found.error, 0.0
            )
        elif target_page is not None:
            seconds = (target_page.response_time_ms or 0.0) / 1000
            targets[key] = CheckedTarget(
                link.target_url, link.internal, target_page.status, target_page.error, seconds
            )
        elif (why := skipped.get(link.target_url)) is not None:
            unchecked[key] = why
            cut.append(SkippedTarget(link.target_url, link.internal, why))
        else:
            unchecked[key] = (crawl_cut or BEYOND_LIMITS) if link.internal else EXTERNAL
    why_counts = Counter(unchecked.values())
    return CheckOutcome(
        base_url=base_url,
        broken=findings.broken_links,
        redirects=tuple(sorted(redirects.values(), key=lambda r: r.url)),
        checked=tuple(targets.values()),
        unchecked=len(unchecked),
        fail_on_redirect=fail_on_redirect,
        unchecked_why=tuple(sorted(why_counts.items(), key=lambda item: (-item[1], item[0]))),
        skipped=tuple(cut),
    )


# -- text -----------------------------------------------------------------------------------


def _referrer_lines(referrers: tuple[Referrer, ...]) -> list[str]:
    lines = []
    for ref in referrers:
        text = "" if ref.anchor_text is None else f' "{ref.anchor_text}"'
        lines.append(f"    from {ref.source_url}{text} [{ref.kind}]")
    return lines


def _chain(link: RedirectChain) -> str:
    steps = [f"{url} ({status})" for url, status in link.hops]
    steps.append(f"{link.final_url or '?'} ({link.final_status or 'not followed'})")
    return " -> ".join(steps)


def format_text(outcome: CheckOutcome) -> str:
    """The human report: each broken target with its referrers, then the redirects. Crawled
    text is made :func:`~sitecrawl._terminal.printable` (one line per entry, no escapes)."""
    lines: list[str] = []
    for broken in outcome.broken:
        scope = "internal" if broken.internal else "external"
        lines.append(f"BROKEN {broken.target_url}  {broken.reason}  ({scope})")
        lines += _referrer_lines(broken.referrers)
    label = "REDIRECT" if outcome.fail_on_redirect else "warning: redirect"
    for link in outcome.redirects:
        lines.append(f"{label} {link.url}  {_chain(link)}")
        lines += _referrer_lines(link.referrers)
    lines.append(summary_line(outcome))
    return "\n".join(printable(line) for line in lines) + "\n"


def summary_line(outcome: CheckOutcome) -> str:
    n = len(outcome.checked)
    line = (
        f"{n:,} link target{'s' * (n != 1)} checked: {len(outcome.broken):,} broken,"
        f" {len(outcome.redirects):,} redirected"
    )
    if outcome.unchecked:
        why = ", ".join(f"{count:,} {reason}" for reason, count in outcome.unchecked_why)
        line += f"; {outcome.unchecked:,} not checked: {why}"
    return line


# -- JUnit XML ------------------------------------------------------------------------------

# Characters XML 1.0 cannot carry at all (control characters but tab, LF, CR; lone surrogates).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _junit_lines(referrers: tuple[Referrer, ...]) -> list[str]:
    return [line.strip() for line in _referrer_lines(referrers)]


def junit_xml(
    outcome: CheckOutcome, *, timestamp: datetime, hostname: str, seconds: float
) -> bytes:
    """The outcome as a JUnit XML document (UTF-8)."""
    broken = {page_key(b.target_url): b for b in outcome.broken}
    redirected = {page_key(r.url): r for r in outcome.redirects}
    failures = 0
    suite = ET.Element("testsuite")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="base_url", value=_xml_text(outcome.base_url))
    ET.SubElement(
        properties, "property", name="fail_on_redirect", value=str(outcome.fail_on_redirect)
    )
    warnings: list[str] = []
    for target in outcome.checked:
        case = ET.SubElement(
            suite,
            "testcase",
            name=_xml_text(target.url),
            classname="internal" if target.internal else "external",
            time=f"{target.seconds:.3f}",
        )
        key = page_key(target.url)
        if (found := broken.get(key)) is not None:
            failures += 1
            failure = ET.SubElement(case, "failure", message=_xml_text(found.reason), type="broken")
            failure.text = _xml_text("\n".join(_junit_lines(found.referrers)))
        elif (link := redirected.get(key)) is not None:
            text = "\n".join([f"redirects: {_chain(link)}", *_junit_lines(link.referrers)])
            if outcome.fail_on_redirect:
                failures += 1
                failure = ET.SubElement(case, "failure", message="redirected", type="redirect")
                failure.text = _xml_text(text)
            else:
                warnings.append(f"warning: {link.url} {text}")
    for skipped in outcome.skipped:
        case = ET.SubElement(
            suite,
            "testcase",
            name=_xml_text(skipped.url),
            classname="internal" if skipped.internal else "external",
            time="0.000",
        )
        ET.SubElement(case, "skipped", message=skipped.reason)
    for reason, count in outcome.unchecked_why:
        ET.SubElement(properties, "property", name=f"not_checked: {reason}", value=str(count))
    ET.SubElement(suite, "system-out").text = _xml_text("\n".join(warnings))
    ET.SubElement(suite, "system-err").text = ""
    suite.attrib.update(
        {
            "name": "sitecrawl check",
            "timestamp": timestamp.strftime("%Y-%m-%dT%H:%M:%S"),
            "hostname": hostname or "localhost",
            "tests": str(len(outcome.checked) + len(outcome.skipped)),
            "failures": str(failures),
            "errors": "0",
            "skipped": str(len(outcome.skipped)),
            "time": f"{seconds:.3f}",
        }
    )
    ET.indent(suite)
    document: bytes = ET.tostring(suite, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
